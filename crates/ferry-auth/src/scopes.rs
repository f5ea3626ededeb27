//! Scope implications configured by the operator (an `admin` scope that grants others,
//! say), expanded before the principal is built. The colon hierarchy (`files` covers
//! `files:read`) needs no configuration: [`ferry_server::Scopes::covers`] applies it.

use std::collections::HashMap;

use ferry_server::Scopes;

/// Most scopes one token can expand to.
const MAX_EXPANDED: usize = 256;

#[derive(Clone, Debug, Default)]
pub(crate) struct Implications {
    map: HashMap<String, Vec<String>>,
}

impl Implications {
    pub(crate) fn add(&mut self, scope: String, implied: Vec<String>) {
        self.map.entry(scope).or_default().extend(implied);
    }

    /// `granted` with every implied scope added, transitively (cycles are harmless).
    pub(crate) fn expand(&self, granted: &[String]) -> Scopes {
        if self.map.is_empty() {
            return granted.iter().collect();
        }
        let mut all: Vec<&str> = Vec::with_capacity(granted.len());
        let mut i = 0;
        for g in granted {
            if !all.contains(&g.as_str()) {
                all.push(g);
            }
        }
        while i < all.len() && all.len() < MAX_EXPANDED {
            if let Some(implied) = self.map.get(all[i]) {
                for s in implied {
                    if !all.contains(&s.as_str()) && all.len() < MAX_EXPANDED {
                        all.push(s);
                    }
                }
            }
            i += 1;
        }
        all.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transitive_and_cyclic() {
        let mut i = Implications::default();
        i.add("admin".into(), vec!["files".into(), "users:read".into()]);
        i.add("users:read".into(), vec!["profile".into()]);
        i.add("profile".into(), vec!["admin".into()]);
        let s = i.expand(&["admin".into()]);
        assert_eq!(s.to_string(), "admin files users:read profile");
        assert!(s.covers("files:delete"));
        let plain = i.expand(&["files:read".into()]);
        assert_eq!(plain.to_string(), "files:read");
        assert!(
            Implications::default()
                .expand(&["a".into(), "a".into()])
                .to_string()
                == "a"
        );
    }
}
