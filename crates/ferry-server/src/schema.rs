//! JSON Schema handling for tool inputs and outputs (basic/index.mdx): schemas from Rust
//! types, compiled validators, dialect checks.

use std::sync::Arc;

use jsonschema::{Draft, Validator};
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
    General(Arc<Validator>),
}

/// At most this many problems are reported for one instance.
const PROBLEM_LIMIT: usize = 8;

impl CompiledSchema {
    /// Compiles `schema`, refusing unknown dialects and unresolvable references.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        let draft = match schema.get("$schema") {
            None => Draft::Draft202012,
            Some(Value::String(uri)) => {
                dialect(uri).ok_or_else(|| format!("unsupported JSON Schema dialect {uri:?}"))?
            }
            Some(_) => return Err("$schema must be a string".into()),
        };
        // The subset follows 2020-12 and 2019-09, where `format` only annotates.
        if matches!(draft, Draft::Draft202012 | Draft::Draft201909)
            && let Some(node) = Node::build(schema)
        {
            return Ok(CompiledSchema {
                engine: Engine::Subset(Arc::new(node)),
            });
        }
        let validator = jsonschema::options()
            .with_draft(draft)
            .build(schema)
            .map_err(|e| format!("invalid JSON Schema: {e}"))?;
        Ok(CompiledSchema {
            engine: Engine::General(Arc::new(validator)),
        })
    }

    /// Validates `instance`; on failure, one line per problem.
    pub(crate) fn validate(&self, instance: &Value) -> Result<(), String> {
        let validator = match &self.engine {
            Engine::Subset(node) => return node.validate(instance, PROBLEM_LIMIT),
            Engine::General(validator) => validator,
        };
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

    /// Whether the subset validator serves this schema.
    #[cfg(test)]
    fn uses_subset(&self) -> bool {
        matches!(self.engine, Engine::Subset(_))
    }
}

fn dialect(uri: &str) -> Option<Draft> {
    let trimmed = uri.trim_end_matches('#');
    Some(match trimmed {
        "https://json-schema.org/draft/2020-12/schema" => Draft::Draft202012,
        "https://json-schema.org/draft/2019-09/schema" => Draft::Draft201909,
        "http://json-schema.org/draft-07/schema" => Draft::Draft7,
        "http://json-schema.org/draft-06/schema" => Draft::Draft6,
        "http://json-schema.org/draft-04/schema" => Draft::Draft4,
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
        assert!(
            CompiledSchema::compile(&json!({"$ref": "https://example.com/remote.json"})).is_err()
        );
        assert!(
            CompiledSchema::compile(
                &json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"})
            )
            .is_ok()
        );
    }

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
