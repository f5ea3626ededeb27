//! Choosing a model from the request's `modelPreferences` (sampling.mdx, "Model Preferences").
//!
//! Hints are read in order; each is a substring of a model name. A hint picks the first of:
//! a model of the table named exactly so; among the table's models whose name contains it,
//! the best by the request's priorities (table order on ties); the model of the first alias
//! whose pattern the hint contains (so `claude-3-sonnet` can map to another provider's model
//! through a `sonnet` alias). When no hint picks a model, the priorities choose among the
//! table's models; with no priorities either, the default model is used.

use ferry_protocol::sampling::ModelPreferences;

/// A model the provider can call, with how it compares to the others, each from 0 to 1.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelProfile {
    /// The model name sent to the provider.
    pub name: String,
    /// How cheap it is: 1 is the cheapest of the table.
    pub cheapness: f64,
    /// How fast it is: 1 is the fastest.
    pub speed: f64,
    /// How capable it is: 1 is the most capable.
    pub intelligence: f64,
}

impl ModelProfile {
    /// A profile; values are clamped to 0..=1.
    pub fn new(name: impl Into<String>, cheapness: f64, speed: f64, intelligence: f64) -> Self {
        ModelProfile {
            name: name.into(),
            cheapness: unit(cheapness),
            speed: unit(speed),
            intelligence: unit(intelligence),
        }
    }

    fn score(&self, p: &Priorities) -> f64 {
        p.cost * self.cheapness + p.speed * self.speed + p.intelligence * self.intelligence
    }
}

/// The models a provider may choose from, hint aliases, and the default.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelTable {
    default: Option<String>,
    models: Vec<ModelProfile>,
    aliases: Vec<(String, String)>,
}

impl ModelTable {
    /// A table whose default model is `default`.
    pub fn new(default: impl Into<String>) -> Self {
        ModelTable {
            default: Some(default.into()),
            ..Default::default()
        }
    }

    /// Sets the default model.
    pub fn with_default(mut self, default: impl Into<String>) -> Self {
        self.default = Some(default.into());
        self
    }

    /// Adds a model the priorities and hints can pick.
    pub fn with_model(mut self, profile: ModelProfile) -> Self {
        self.models.push(profile);
        self
    }

    /// Maps every hint containing `pattern` (case-insensitive) to `model`.
    pub fn with_alias(mut self, pattern: impl Into<String>, model: impl Into<String>) -> Self {
        self.aliases
            .push((pattern.into().to_lowercase(), model.into()));
        self
    }

    /// The default model, if set.
    pub fn default_model(&self) -> Option<&str> {
        self.default.as_deref()
    }

    /// Whether the table can name any model.
    pub fn is_empty(&self) -> bool {
        self.default.is_none() && self.models.is_empty()
    }

    /// The model for these preferences; `None` only for an empty table.
    ///
    /// ```
    /// use ferry_llm::{ModelProfile, ModelTable};
    /// use ferry_protocol::sampling::ModelPreferences;
    ///
    /// let table = ModelTable::new("gpt-4o-mini")
    ///     .with_model(ModelProfile::new("gpt-4o-mini", 1.0, 0.9, 0.5))
    ///     .with_model(ModelProfile::new("gpt-4o", 0.3, 0.6, 0.9))
    ///     .with_alias("sonnet", "gpt-4o");
    /// let sonnet = ModelPreferences::new().with_hint("claude-3-sonnet");
    /// assert_eq!(table.select(Some(&sonnet)), Some("gpt-4o"));
    /// let smart = ModelPreferences::new().with_intelligence_priority(0.9);
    /// assert_eq!(table.select(Some(&smart)), Some("gpt-4o"));
    /// assert_eq!(table.select(None), Some("gpt-4o-mini"));
    /// ```
    pub fn select(&self, preferences: Option<&ModelPreferences>) -> Option<&str> {
        let priorities = preferences.map(Priorities::of).unwrap_or_default();
        let hints = preferences
            .and_then(|p| p.hints.as_deref())
            .unwrap_or_default();
        for hint in hints {
            let Some(hint) = hint.name.as_deref().map(str::trim) else {
                continue;
            };
            if hint.is_empty() {
                continue;
            }
            if let Some(model) = self.by_hint(&hint.to_lowercase(), &priorities) {
                return Some(model);
            }
        }
        if priorities.any()
            && let Some(best) = best(self.models.iter(), &priorities)
        {
            return Some(&best.name);
        }
        self.default
            .as_deref()
            .or_else(|| self.models.first().map(|m| m.name.as_str()))
    }

    fn by_hint(&self, hint: &str, priorities: &Priorities) -> Option<&str> {
        if let Some(exact) = self.names().find(|n| n.to_lowercase() == hint) {
            return Some(exact);
        }
        let containing = self
            .models
            .iter()
            .filter(|m| m.name.to_lowercase().contains(hint));
        if let Some(best) = best(containing, priorities) {
            return Some(&best.name);
        }
        if let Some(default) = &self.default
            && default.to_lowercase().contains(hint)
        {
            return Some(default);
        }
        self.aliases
            .iter()
            .find(|(pattern, _)| hint.contains(pattern.as_str()))
            .map(|(_, model)| model.as_str())
    }

    fn names(&self) -> impl Iterator<Item = &str> {
        self.models
            .iter()
            .map(|m| m.name.as_str())
            .chain(self.default.as_deref())
    }
}

/// The highest score, the earliest on ties.
fn best<'a>(
    models: impl Iterator<Item = &'a ModelProfile>,
    priorities: &Priorities,
) -> Option<&'a ModelProfile> {
    let mut best: Option<(&ModelProfile, f64)> = None;
    for m in models {
        let s = m.score(priorities);
        if best.is_none_or(|(_, b)| s > b) {
            best = Some((m, s));
        }
    }
    best.map(|(m, _)| m)
}

#[derive(Clone, Copy, Debug, Default)]
struct Priorities {
    cost: f64,
    speed: f64,
    intelligence: f64,
}

impl Priorities {
    fn of(p: &ModelPreferences) -> Self {
        let get = |v: Option<f64>| unit(v.unwrap_or(0.0));
        Priorities {
            cost: get(p.cost_priority),
            speed: get(p.speed_priority),
            intelligence: get(p.intelligence_priority),
        }
    }

    fn any(&self) -> bool {
        self.cost > 0.0 || self.speed > 0.0 || self.intelligence > 0.0
    }
}

fn unit(v: f64) -> f64 {
    if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> ModelTable {
        ModelTable::new("llama-3.1-8b")
            .with_model(ModelProfile::new("llama-3.1-8b", 1.0, 1.0, 0.3))
            .with_model(ModelProfile::new("llama-3.1-70b", 0.4, 0.4, 0.8))
            .with_model(ModelProfile::new("qwen-2.5-72b", 0.3, 0.3, 0.9))
            .with_alias("sonnet", "llama-3.1-70b")
            .with_alias("claude", "qwen-2.5-72b")
    }

    #[test]
    fn hints_in_order() {
        let t = table();
        let p = ModelPreferences::new()
            .with_hint("gemini")
            .with_hint("claude-3-sonnet")
            .with_hint("claude");
        assert_eq!(t.select(Some(&p)), Some("llama-3.1-70b"));
        let p = ModelPreferences::new().with_hint("CLAUDE-3-haiku");
        assert_eq!(t.select(Some(&p)), Some("qwen-2.5-72b"));
        // Exact name beats substring scoring.
        let p = ModelPreferences::new()
            .with_hint("llama-3.1-8b")
            .with_intelligence_priority(1.0);
        assert_eq!(t.select(Some(&p)), Some("llama-3.1-8b"));
        // A substring shared by several models: the priorities decide among them.
        let p = ModelPreferences::new()
            .with_hint("llama")
            .with_intelligence_priority(1.0);
        assert_eq!(t.select(Some(&p)), Some("llama-3.1-70b"));
        let p = ModelPreferences::new().with_hint("llama");
        assert_eq!(t.select(Some(&p)), Some("llama-3.1-8b"));
    }

    #[test]
    fn priorities_without_matching_hint() {
        let t = table();
        let p = ModelPreferences::new()
            .with_hint("gpt")
            .with_cost_priority(0.9)
            .with_intelligence_priority(0.2);
        assert_eq!(t.select(Some(&p)), Some("llama-3.1-8b"));
        let p = ModelPreferences::new()
            .with_cost_priority(0.1)
            .with_intelligence_priority(0.9);
        assert_eq!(t.select(Some(&p)), Some("qwen-2.5-72b"));
        // Out-of-range priorities are clamped, not trusted.
        let p = ModelPreferences::new()
            .with_cost_priority(50.0)
            .with_intelligence_priority(1.0);
        assert_eq!(t.select(Some(&p)), Some("llama-3.1-8b"));
    }

    #[test]
    fn default_and_empty() {
        assert_eq!(table().select(None), Some("llama-3.1-8b"));
        assert_eq!(
            table().select(Some(&ModelPreferences::new().with_hint(" "))),
            Some("llama-3.1-8b")
        );
        assert_eq!(ModelTable::default().select(None), None);
        let only = ModelTable::default().with_model(ModelProfile::new("m", 0.0, 0.0, 0.0));
        assert_eq!(only.select(None), Some("m"));
        let by_default_name = ModelTable::new("gpt-4o-mini");
        let p = ModelPreferences::new().with_hint("mini");
        assert_eq!(by_default_name.select(Some(&p)), Some("gpt-4o-mini"));
    }
}
