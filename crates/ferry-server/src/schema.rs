//! JSON Schema handling for tool inputs and outputs (basic/index.mdx): schemas from Rust
//! types, compiled validators, dialect checks.
//!
//! The built-in validator (`fast_schema`) serves the subset that derived schemas use.
//! Anything else needs the general engine, the `jsonschema` crate, behind the
//! `json-schema` feature (on by default); without the feature, such a schema is refused
//! when its tool is built, so nothing is ever left unvalidated.

use std::sync::Arc;

#[cfg(feature = "json-schema")]
use jsonschema::Validator;
use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use crate::fast_schema::Node;

/// The dialect assumed when a schema has no `$schema`.
pub const DEFAULT_DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// A compiled schema, shared between requests.
///
/// Schemas inside the common subset (see `fast_schema`) validate
/// with a small tree walker; everything else goes to the `jsonschema` crate.
#[derive(Clone)]
pub(crate) struct CompiledSchema {
    engine: Engine,
}

#[derive(Clone)]
enum Engine {
    Subset(Arc<Node>),
    #[cfg(feature = "json-schema")]
    General(Arc<Validator>),
}

/// The JSON Schema dialects a tool schema may name in `$schema`.
#[derive(Clone, Copy)]
enum Dialect {
    Draft202012,
    Draft201909,
    Draft7,
    Draft6,
    Draft4,
}

/// At most this many problems are reported for one instance.
const PROBLEM_LIMIT: usize = 8;

impl CompiledSchema {
    /// Compiles `schema`, refusing unknown dialects and unresolvable references.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        let dialect = match schema.get("$schema") {
            None => Dialect::Draft202012,
            Some(Value::String(uri)) => {
                dialect(uri).ok_or_else(|| format!("unsupported JSON Schema dialect {uri:?}"))?
            }
            Some(_) => return Err("$schema must be a string".into()),
        };
        // The subset follows 2020-12 and 2019-09, where `format` only annotates.
        if matches!(dialect, Dialect::Draft202012 | Dialect::Draft201909)
            && let Some(node) = Node::build(schema)
        {
            return Ok(CompiledSchema {
                engine: Engine::Subset(Arc::new(node)),
            });
        }
        Self::general(schema, dialect)
    }

    /// Compiles with the general engine.
    #[cfg(feature = "json-schema")]
    fn general(schema: &Value, dialect: Dialect) -> Result<Self, String> {
        use jsonschema::Draft;
        let draft = match dialect {
            Dialect::Draft202012 => Draft::Draft202012,
            Dialect::Draft201909 => Draft::Draft201909,
            Dialect::Draft7 => Draft::Draft7,
            Dialect::Draft6 => Draft::Draft6,
            Dialect::Draft4 => Draft::Draft4,
        };
        let validator = jsonschema::options()
            .with_draft(draft)
            .build(schema)
            .map_err(|e| format!("invalid JSON Schema: {e}"))?;
        Ok(CompiledSchema {
            engine: Engine::General(Arc::new(validator)),
        })
    }

    /// Without the general engine, a schema outside the subset is refused.
    #[cfg(not(feature = "json-schema"))]
    fn general(_schema: &Value, dialect: Dialect) -> Result<Self, String> {
        let what = match dialect {
            Dialect::Draft202012 | Dialect::Draft201909 => {
                "this schema uses keywords or references outside the built-in validator's \
                 subset, or is not a valid schema"
            }
            Dialect::Draft7 | Dialect::Draft6 | Dialect::Draft4 => {
                "only 2020-12 and 2019-09 schemas are validated by the built-in validator"
            }
        };
        Err(format!(
            "{what}; build with the `json-schema` feature of ferry (or ferry-server) to \
             check it with the general JSON Schema engine"
        ))
    }

    /// Validates `instance`; on failure, one line per problem.
    pub(crate) fn validate(&self, instance: &Value) -> Result<(), String> {
        match &self.engine {
            Engine::Subset(node) => node.validate(instance, PROBLEM_LIMIT),
            #[cfg(feature = "json-schema")]
            Engine::General(validator) => general_verdict(validator, instance),
        }
    }

    /// Whether the subset validator serves this schema.
    #[cfg(test)]
    fn uses_subset(&self) -> bool {
        matches!(self.engine, Engine::Subset(_))
    }
}

/// The general engine's verdict, one line per problem.
#[cfg(feature = "json-schema")]
fn general_verdict(validator: &Validator, instance: &Value) -> Result<(), String> {
    if validator.is_valid(instance) {
        return Ok(());
    }
    let problems: Vec<String> = validator
        .iter_errors(instance)
        .take(PROBLEM_LIMIT)
        .map(|e| {
            let path = e.instance_path().to_string();
            if path.is_empty() {
                e.to_string()
            } else {
                format!("{path}: {e}")
            }
        })
        .collect();
    Err(problems.join("; "))
}

fn dialect(uri: &str) -> Option<Dialect> {
    let trimmed = uri.trim_end_matches('#');
    Some(match trimmed {
        "https://json-schema.org/draft/2020-12/schema" => Dialect::Draft202012,
        "https://json-schema.org/draft/2019-09/schema" => Dialect::Draft201909,
        "http://json-schema.org/draft-07/schema" => Dialect::Draft7,
        "http://json-schema.org/draft-06/schema" => Dialect::Draft6,
        "http://json-schema.org/draft-04/schema" => Dialect::Draft4,
        _ => return None,
    })
}

/// The JSON Schema (2020-12) of a Rust type, shaped for a tool's `inputSchema`: the root
/// is an object, and a type without fields becomes `{"type":"object",
/// "additionalProperties":false}` as the spec recommends.
pub(crate) fn input_schema_for<T: JsonSchema>() -> Value {
    let mut schema = schema_for::<T>();
    if let Value::Object(map) = &mut schema
        && map.get("type") != Some(&json!("object"))
    {
        if map.get("type") == Some(&json!("null")) || map.is_empty() {
            return json!({"type": "object", "additionalProperties": false});
        }
        map.insert("type".into(), json!("object"));
    }
    schema
}

/// The JSON Schema (2020-12) of a Rust type, for `outputSchema`.
pub(crate) fn schema_for<T: JsonSchema>() -> Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        // The type's Rust name says nothing to a client.
        map.remove("title");
        map.remove("$schema");
    }
    value
}

/// A schema for a tool without parameters.
pub(crate) fn empty_object_schema() -> Value {
    let mut m = Map::new();
    m.insert("type".into(), json!("object"));
    m.insert("additionalProperties".into(), json!(false));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(JsonSchema, serde::Deserialize)]
    #[allow(dead_code)]
    struct Args {
        /// Text to echo.
        text: String,
        times: Option<u8>,
    }

    #[test]
    fn schema_from_type_validates() {
        let s = input_schema_for::<Args>();
        assert_eq!(s["type"], "object");
        assert!(s.get("title").is_none());
        let c = CompiledSchema::compile(&s).unwrap();
        assert!(c.uses_subset());
        assert!(c.validate(&json!({"text": "hi"})).is_ok());
        let err = c.validate(&json!({"text": 3})).unwrap_err();
        assert!(err.contains("/text"), "{err}");
        assert!(c.validate(&json!({"times": 3})).is_err());
    }

    #[test]
    fn unit_type_has_empty_object_schema() {
        assert_eq!(input_schema_for::<()>(), empty_object_schema());
    }

    #[test]
    fn refuses_unknown_dialects_and_remote_refs() {
        assert!(CompiledSchema::compile(&json!({"$schema": "https://example.com/s"})).is_err());
        assert!(CompiledSchema::compile(&json!({"$schema": 7})).is_err());
        assert!(
            CompiledSchema::compile(&json!({"$ref": "https://example.com/remote.json"})).is_err()
        );
        assert_eq!(
            CompiledSchema::compile(
                &json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"})
            )
            .is_ok(),
            cfg!(feature = "json-schema")
        );
    }

    /// Without the general engine, what the subset cannot check is refused at build, with
    /// the feature to turn on named; what it can check still validates.
    #[cfg(not(feature = "json-schema"))]
    #[test]
    fn without_the_general_engine_schemas_outside_the_subset_are_refused() {
        for schema in [
            json!({"type": "object", "properties": {"n": {"type": "integer", "multipleOf": 2}}}),
            json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^a"}}}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
        ] {
            let err = CompiledSchema::compile(&schema)
                .err()
                .unwrap_or_else(|| panic!("{schema} compiled without the general engine"));
            assert!(err.contains("`json-schema` feature"), "{err}");
        }
        let derived = CompiledSchema::compile(&input_schema_for::<Args>()).unwrap();
        assert!(derived.validate(&json!({"text": "hi", "times": 2})).is_ok());
        assert!(
            derived
                .validate(&json!({"text": "hi", "times": 300}))
                .is_err()
        );
    }

    #[cfg(feature = "json-schema")]
    #[test]
    fn schemas_outside_the_subset_use_the_general_validator() {
        let c = CompiledSchema::compile(&json!({
            "type": "object",
            "properties": {"n": {"type": ["integer", "null"], "multipleOf": 2}}
        }))
        .unwrap();
        assert!(!c.uses_subset());
        assert!(c.validate(&json!({"n": null})).is_ok());
        assert!(c.validate(&json!({"n": 4})).is_ok());
        assert!(c.validate(&json!({"n": 3})).is_err());
        assert!(c.validate(&json!({"n": "x"})).is_err());
        // Recursive references are left to the general validator too.
        let tree = CompiledSchema::compile(&json!({
            "$ref": "#/$defs/node",
            "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}}
        }))
        .unwrap();
        assert!(!tree.uses_subset());
        assert!(tree.validate(&json!({"next": {"next": {}}})).is_ok());
        assert!(tree.validate(&json!({"next": {"next": 1}})).is_err());
        // A broken definition is refused even when nothing references it.
        assert!(
            CompiledSchema::compile(&json!({"type": "object", "$defs": {"x": {"type": 5}}}))
                .is_err()
        );
        // Draft 7 validates `format`, so it never takes the subset.
        let d7 = CompiledSchema::compile(
            &json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"}),
        )
        .unwrap();
        assert!(!d7.uses_subset());
    }
}
