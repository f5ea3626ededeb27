//! The `#[serde(rename_all = "...")]` case conversions, with the same results as serde's
//! own derive, so that property names and option values match what serde deserializes.

/// One of the case conversions serde accepts in `rename_all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RenameRule {
    /// `lowercase`
    Lower,
    /// `UPPERCASE`
    Upper,
    /// `PascalCase`
    Pascal,
    /// `camelCase`
    Camel,
    /// `snake_case`
    Snake,
    /// `SCREAMING_SNAKE_CASE`
    ScreamingSnake,
    /// `kebab-case`
    Kebab,
    /// `SCREAMING-KEBAB-CASE`
    ScreamingKebab,
}

impl RenameRule {
    /// Every rule with the spelling serde uses for it.
    pub(crate) const ALL: [(&'static str, RenameRule); 8] = [
        ("lowercase", RenameRule::Lower),
        ("UPPERCASE", RenameRule::Upper),
        ("PascalCase", RenameRule::Pascal),
        ("camelCase", RenameRule::Camel),
        ("snake_case", RenameRule::Snake),
        ("SCREAMING_SNAKE_CASE", RenameRule::ScreamingSnake),
        ("kebab-case", RenameRule::Kebab),
        ("SCREAMING-KEBAB-CASE", RenameRule::ScreamingKebab),
    ];

    /// Parses serde's spelling of a rule.
    pub(crate) fn parse(name: &str) -> Option<RenameRule> {
        Self::ALL
            .iter()
            .find(|(spelling, _)| *spelling == name)
            .map(|(_, rule)| *rule)
    }

    /// Renames a struct field, which is taken to be written in `snake_case`.
    pub(crate) fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_owned(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut out = String::with_capacity(field.len());
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        out.push(ch.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        out.push(ch);
                    }
                }
                out
            }
            RenameRule::Camel => lower_first(&RenameRule::Pascal.apply_to_field(field)),
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }

    /// Renames an enum variant, which is taken to be written in `PascalCase`.
    pub(crate) fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_owned(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => lower_first(variant),
            RenameRule::Snake => {
                let mut out = String::with_capacity(variant.len() + 4);
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        out.push('_');
                    }
                    out.push(ch.to_ascii_lowercase());
                }
                out
            }
            RenameRule::ScreamingSnake => RenameRule::Snake
                .apply_to_variant(variant)
                .to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake
                .apply_to_variant(variant)
                .replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake
                .apply_to_variant(variant)
                .replace('_', "-"),
        }
    }
}

/// Lowercases the first character if it is ASCII, as serde does.
fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => {
            let mut out = String::with_capacity(s.len());
            out.push(first.to_ascii_lowercase());
            out.push_str(chars.as_str());
            out
        }
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::RenameRule;

    #[test]
    fn every_rule_parses_from_its_spelling() {
        for (spelling, rule) in RenameRule::ALL {
            assert_eq!(RenameRule::parse(spelling), Some(rule));
        }
        assert_eq!(RenameRule::parse("Title Case"), None);
        assert_eq!(RenameRule::parse("camelcase"), None);
    }

    #[test]
    fn fields() {
        let cases: [(&str, [&str; 8]); 3] = [
            (
                "outcome",
                [
                    "outcome", "OUTCOME", "Outcome", "outcome", "outcome", "OUTCOME", "outcome",
                    "OUTCOME",
                ],
            ),
            (
                "very_tasty",
                [
                    "very_tasty",
                    "VERY_TASTY",
                    "VeryTasty",
                    "veryTasty",
                    "very_tasty",
                    "VERY_TASTY",
                    "very-tasty",
                    "VERY-TASTY",
                ],
            ),
            ("a", ["a", "A", "A", "a", "a", "A", "a", "A"]),
        ];
        for (original, expected) in cases {
            for ((_, rule), want) in RenameRule::ALL.iter().zip(expected) {
                assert_eq!(
                    rule.apply_to_field(original),
                    want,
                    "{rule:?} on {original}"
                );
            }
        }
    }

    #[test]
    fn variants() {
        let cases: [(&str, [&str; 8]); 3] = [
            (
                "Outcome",
                [
                    "outcome", "OUTCOME", "Outcome", "outcome", "outcome", "OUTCOME", "outcome",
                    "OUTCOME",
                ],
            ),
            (
                "VeryTasty",
                [
                    "verytasty",
                    "VERYTASTY",
                    "VeryTasty",
                    "veryTasty",
                    "very_tasty",
                    "VERY_TASTY",
                    "very-tasty",
                    "VERY-TASTY",
                ],
            ),
            ("A", ["a", "A", "A", "a", "a", "A", "a", "A"]),
        ];
        for (original, expected) in cases {
            for ((_, rule), want) in RenameRule::ALL.iter().zip(expected) {
                assert_eq!(
                    rule.apply_to_variant(original),
                    want,
                    "{rule:?} on {original}"
                );
            }
        }
    }
}
