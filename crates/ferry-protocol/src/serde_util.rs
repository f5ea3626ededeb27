//! Small serde helpers shared by the message modules.

use serde::{Deserialize, Deserializer, Serializer};
use serde_json::Value;

/// The largest integer an `f64` holds exactly (2^53).
const EXACT_INT: f64 = 9_007_199_254_740_992.0;

/// Writes an `f64` with no fractional part as a JSON integer (`50`, not `50.0`), so numbers
/// read from the wire are written back the way they came.
pub(crate) fn compact_f64<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.fract() == 0.0 && v.abs() < EXACT_INT {
        // The range check above makes the cast exact.
        s.serialize_i64(*v as i64)
    } else {
        s.serialize_f64(*v)
    }
}

/// [`compact_f64`] for an optional field (used with `skip_serializing_if = "Option::is_none"`).
pub(crate) fn compact_f64_opt<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => compact_f64(v, s),
        None => s.serialize_none(),
    }
}

/// Reads an optional "any JSON value" member, keeping an explicit `null` as `Some(Null)`.
/// Use with `#[serde(default)]` so an absent member stays `None`.
pub(crate) fn any_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Implements `Deserialize` for a struct whose known members are typed and whose other
/// members land in an `other` map, without `#[serde(flatten)]` (which buffers every member
/// and re-parses it: these types are read on every request).
macro_rules! open_struct_deserialize {
    ($ty:ident { $($json:literal => $field:ident),* $(,)? }) => {
        impl $ty {
            /// Reads an object's members into `out`, which starts as the default value:
            /// a large value is read where it will live (a box), never moved.
            #[allow(dead_code)]
            pub(crate) fn deserialize_into<'de, D: ::serde::Deserializer<'de>>(
                d: D,
                out: &mut $ty,
            ) -> Result<(), D::Error> {
                struct V<'a>(&'a mut $ty);
                impl<'de> ::serde::de::Visitor<'de> for V<'_> {
                    type Value = ();
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(concat!("a ", stringify!($ty), " object"))
                    }
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
                        let out = self.0;
                        while let Some($crate::borrowed::CowStr(key)) = map.next_key()? {
                            match key.as_ref() {
                                $($json => {
                                    if out.$field.is_some() {
                                        return Err(::serde::de::Error::duplicate_field($json));
                                    }
                                    out.$field = map.next_value()?;
                                })*
                                _ => {
                                    let value: ::serde_json::Value = map.next_value()?;
                                    out.other.insert(key.into_owned(), value);
                                }
                            }
                        }
                        Ok(())
                    }
                }
                d.deserialize_map(V(out))
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let mut out = $ty::default();
                $ty::deserialize_into(d, &mut out)?;
                Ok(out)
            }
        }
    };
}
pub(crate) use open_struct_deserialize;
