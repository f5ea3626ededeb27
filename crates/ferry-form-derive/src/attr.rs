//! Parsing of `#[form(...)]`, the parts of `#[serde(...)]` that change what serde
//! deserializes, and doc comments.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::quote;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Ident, Lit, LitStr, Token, UnOp};

use crate::case::RenameRule;

/// Remembers the first error and adds later ones to it, so one expansion reports them all.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(first) => first.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub(crate) fn check(self) -> syn::Result<()> {
        match self.0 {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

/// Skips the value of a meta item this crate does not interpret: `key`, `key = expr` or
/// `key(...)`.
fn skip_meta(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.input.parse::<Token![=]>()?;
        meta.input.step(|cursor| {
            let mut rest = *cursor;
            while let Some((tt, next)) = rest.token_tree() {
                if let TokenTree::Punct(p) = &tt
                    && p.as_char() == ','
                {
                    return Ok(((), rest));
                }
                rest = next;
            }
            Ok(((), rest))
        })?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

/// Removes the invisible groups `macro_rules!` puts around `$x:literal` and `$x:expr`.
fn ungroup(expr: Expr) -> Expr {
    match expr {
        Expr::Group(group) => ungroup(*group.expr),
        other => other,
    }
}

/// Parses the expression after `=`.
fn parse_value(meta: &ParseNestedMeta<'_>) -> syn::Result<Expr> {
    meta.value()?.parse().map(ungroup)
}

/// Parses `= "..."` after a key.
fn parse_str(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    let expr = parse_value(meta)?;
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s),
        other => Err(syn::Error::new_spanned(
            other,
            "expected a string literal, like `\"...\"`",
        )),
    }
}

/// Parses `= "..."` or `(serialize = "...", deserialize = "...")` and keeps the name used
/// for deserializing, which is the one forms care about.
fn parse_serde_name(meta: &ParseNestedMeta<'_>) -> syn::Result<Option<LitStr>> {
    if meta.input.peek(Token![=]) {
        return parse_str(meta).map(Some);
    }
    let mut deserialize = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("deserialize") {
            deserialize = Some(parse_str(&inner)?);
        } else {
            skip_meta(&inner)?;
        }
        Ok(())
    })?;
    Ok(deserialize)
}

/// Parses a non-negative integer literal.
fn parse_count(meta: &ParseNestedMeta<'_>) -> syn::Result<u64> {
    let expr = parse_value(meta)?;
    match &expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse::<u64>(),
        _ => Err(syn::Error::new_spanned(
            expr,
            "expected a non-negative integer literal",
        )),
    }
}

/// The crate path to use in generated code: `::ferry_form`, or what `#[form(crate = "...")]`
/// names.
pub(crate) struct ContainerForm {
    pub krate: TokenStream,
}

/// Parses the `#[form(...)]` attributes on a struct or enum. Only `crate = "..."` is
/// accepted there.
pub(crate) fn container_form(attrs: &[Attribute]) -> syn::Result<ContainerForm> {
    let mut krate: Option<syn::Path> = None;
    let mut errors = Errors::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("form")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                if krate.is_some() {
                    return Err(meta.error("duplicate `crate` in #[form]"));
                }
                let lit = parse_str(&meta)?;
                krate = Some(lit.parse()?);
                Ok(())
            } else {
                Err(meta.error(
                    "unknown #[form] option on a type; the only one is `crate = \"path\"` \
                     (field and variant options go on the fields and variants)",
                ))
            }
        });
        if let Err(e) = result {
            errors.push(e);
        }
    }
    errors.check()?;
    let krate = match krate {
        Some(path) => quote!(#path),
        None => default_crate_path(),
    };
    Ok(ContainerForm { krate })
}

/// Where `ferry_form` is reached from the crate using the derive: directly, or through
/// the `ferry` facade or `ferry-server`, which re-export it as `form`.
fn default_crate_path() -> TokenStream {
    use proc_macro_crate::{FoundCrate, crate_name};
    let ident =
        |name: &str| syn::Ident::new(&name.replace('-', "_"), proc_macro2::Span::call_site());
    match crate_name("ferry-form") {
        Ok(FoundCrate::Name(name)) => {
            let name = ident(&name);
            return quote!(::#name);
        }
        Ok(FoundCrate::Itself) => return quote!(::ferry_form),
        Err(_) => {}
    }
    for facade in ["ferry", "ferry-server"] {
        if let Ok(found) = crate_name(facade) {
            let name = match found {
                FoundCrate::Name(name) => ident(&name),
                FoundCrate::Itself => ident(facade),
            };
            return quote!(::#name::form);
        }
    }
    quote!(::ferry_form)
}

/// A number literal from an attribute, possibly negated.
#[derive(Clone)]
pub(crate) struct NumLit {
    /// The tokens, for error spans.
    pub expr: Expr,
    pub value: NumValue,
}

/// The value of a [`NumLit`].
#[derive(Clone, Copy)]
pub(crate) enum NumValue {
    Int(i128),
    Float(f64),
}

impl NumLit {
    pub(crate) fn as_f64(&self) -> f64 {
        match self.value {
            NumValue::Int(i) => i as f64,
            NumValue::Float(f) => f,
        }
    }

    /// Whether the literal is a whole number (`3` or `3.0`).
    pub(crate) fn is_integral(&self) -> bool {
        match self.value {
            NumValue::Int(_) => true,
            NumValue::Float(f) => f.fract() == 0.0,
        }
    }

    /// The value as an `i128`, or 0 when it is not a whole number (only read then for
    /// whole numbers).
    pub(crate) fn as_i128(&self) -> i128 {
        match self.value {
            NumValue::Int(i) => i,
            NumValue::Float(f) if f.fract() == 0.0 && f.abs() < 1e38 => f as i128,
            NumValue::Float(_) => 0,
        }
    }

    /// Compares two literals by value.
    pub(crate) fn greater_than(&self, other: &NumLit) -> bool {
        match (self.value, other.value) {
            (NumValue::Int(a), NumValue::Int(b)) => a > b,
            _ => self.as_f64() > other.as_f64(),
        }
    }

    /// Code building a `serde_json::Number` with this value.
    pub(crate) fn number_tokens(&self, krate: &TokenStream) -> TokenStream {
        match self.value {
            NumValue::Int(i) => {
                if let Ok(i) = i64::try_from(i) {
                    quote!(#krate::__private::serde_json::Number::from(#i))
                } else {
                    // Checked to fit a u64 when parsed.
                    let u = u64::try_from(i).unwrap_or(u64::MAX);
                    quote!(#krate::__private::serde_json::Number::from(#u))
                }
            }
            NumValue::Float(f) => quote!(#krate::__private::number_from_f64(#f)),
        }
    }
}

fn parse_num_expr(expr: Expr) -> syn::Result<NumLit> {
    let expr = ungroup(expr);
    let (negative, lit) = match &expr {
        Expr::Lit(ExprLit { lit, .. }) => (false, lit.clone()),
        Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => {
            match ungroup((*unary.expr).clone()) {
                Expr::Lit(ExprLit { lit, .. }) => (true, lit),
                _ => return Err(syn::Error::new_spanned(expr, "expected a number literal")),
            }
        }
        _ => return Err(syn::Error::new_spanned(expr, "expected a number literal")),
    };
    let value = match &lit {
        Lit::Int(i) => {
            let v = i
                .base10_parse::<u128>()
                .ok()
                .and_then(|v| i128::try_from(v).ok());
            match v {
                Some(v) => NumValue::Int(if negative { -v } else { v }),
                None => {
                    return Err(syn::Error::new_spanned(
                        expr,
                        "the number does not fit the range of a JSON integer (i64 or u64)",
                    ));
                }
            }
        }
        Lit::Float(f) => {
            let v = f.base10_parse::<f64>()?;
            if !v.is_finite() {
                return Err(syn::Error::new_spanned(
                    expr,
                    "the number is too large to be represented in JSON",
                ));
            }
            NumValue::Float(if negative { -v } else { v })
        }
        _ => return Err(syn::Error::new_spanned(expr, "expected a number literal")),
    };
    if let NumValue::Int(i) = value
        && i64::try_from(i).is_err()
        && u64::try_from(i).is_err()
    {
        return Err(syn::Error::new_spanned(
            expr,
            "the number does not fit the range of a JSON integer (i64 or u64)",
        ));
    }
    Ok(NumLit { expr, value })
}

/// A `default = ...` value.
pub(crate) enum DefaultLit {
    Str(LitStr),
    Num(NumLit),
    Bool(syn::LitBool),
    Array(syn::ExprArray, Vec<LitStr>),
}

fn parse_default(meta: &ParseNestedMeta<'_>) -> syn::Result<DefaultLit> {
    let expr = parse_value(meta)?;
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(DefaultLit::Str(s)),
        Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        }) => Ok(DefaultLit::Bool(b)),
        Expr::Array(array) => {
            let mut items = Vec::with_capacity(array.elems.len());
            for elem in &array.elems {
                match ungroup(elem.clone()) {
                    Expr::Lit(ExprLit {
                        lit: Lit::Str(s), ..
                    }) => items.push(s),
                    other => {
                        return Err(syn::Error::new_spanned(
                            other,
                            "a multi-select `default` is an array of string literals, \
                             like `[\"red\", \"blue\"]`",
                        ));
                    }
                }
            }
            Ok(DefaultLit::Array(array, items))
        }
        expr @ (Expr::Lit(_) | Expr::Unary(_)) => parse_num_expr(expr).map(DefaultLit::Num),
        other => Err(syn::Error::new_spanned(
            other,
            "`default` must be a string, number or boolean literal, or an array of string \
             literals for a multi-select field",
        )),
    }
}

/// A `format = "..."` value.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Email,
    Uri,
    Date,
    DateTime,
}

impl Format {
    /// The `ferry_form::StringFormat` variant name.
    pub(crate) fn variant(self) -> Ident {
        let name = match self {
            Format::Email => "Email",
            Format::Uri => "Uri",
            Format::Date => "Date",
            Format::DateTime => "DateTime",
        };
        Ident::new(name, Span::call_site())
    }
}

/// The options of `#[form(...)]` on a struct field.
#[derive(Default)]
pub(crate) struct FieldForm {
    pub title: Option<LitStr>,
    pub description: Option<LitStr>,
    pub min_length: Option<(Ident, u64)>,
    pub max_length: Option<(Ident, u64)>,
    pub format: Option<(Ident, Format)>,
    pub minimum: Option<(Ident, NumLit)>,
    pub maximum: Option<(Ident, NumLit)>,
    pub default: Option<(Ident, DefaultLit)>,
    pub min_items: Option<(Ident, u64)>,
    pub max_items: Option<(Ident, u64)>,
}

const FIELD_OPTIONS: &str = "title, description, min_length, max_length, format, minimum, \
                             maximum, default, min_items, max_items";

impl FieldForm {
    /// Whether any option was given.
    pub(crate) fn is_empty(&self) -> bool {
        self.title.is_none()
            && self.description.is_none()
            && self.min_length.is_none()
            && self.max_length.is_none()
            && self.format.is_none()
            && self.minimum.is_none()
            && self.maximum.is_none()
            && self.default.is_none()
            && self.min_items.is_none()
            && self.max_items.is_none()
    }
}

fn set_once<T>(slot: &mut Option<T>, meta: &ParseNestedMeta<'_>, value: T) -> syn::Result<()> {
    if slot.is_some() {
        let key = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        return Err(meta.error(format!("duplicate `{key}` in #[form]")));
    }
    *slot = Some(value);
    Ok(())
}

/// Parses every `#[form(...)]` on a struct field.
pub(crate) fn field_form(attrs: &[Attribute]) -> syn::Result<FieldForm> {
    let mut out = FieldForm::default();
    let mut errors = Errors::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("form")) {
        let result = attr.parse_nested_meta(|meta| {
            let Some(key) = meta.path.get_ident().cloned() else {
                return Err(meta.error(format!(
                    "unknown #[form] option; expected one of: {FIELD_OPTIONS}"
                )));
            };
            match key.to_string().as_str() {
                "title" => {
                    let v = parse_str(&meta)?;
                    set_once(&mut out.title, &meta, v)
                }
                "description" => {
                    let v = parse_str(&meta)?;
                    set_once(&mut out.description, &meta, v)
                }
                "min_length" => {
                    let v = parse_count(&meta)?;
                    set_once(&mut out.min_length, &meta, (key, v))
                }
                "max_length" => {
                    let v = parse_count(&meta)?;
                    set_once(&mut out.max_length, &meta, (key, v))
                }
                "format" => {
                    let lit = parse_str(&meta)?;
                    let format = match lit.value().as_str() {
                        "email" => Format::Email,
                        "uri" => Format::Uri,
                        "date" => Format::Date,
                        "date-time" => Format::DateTime,
                        other => {
                            return Err(syn::Error::new_spanned(
                                &lit,
                                format!(
                                    "unsupported format {other:?}: MCP elicitation forms \
                                     allow only \"email\", \"uri\", \"date\" and \"date-time\""
                                ),
                            ));
                        }
                    };
                    set_once(&mut out.format, &meta, (key, format))
                }
                "minimum" => {
                    let v = parse_num_expr(parse_value(&meta)?)?;
                    set_once(&mut out.minimum, &meta, (key, v))
                }
                "maximum" => {
                    let v = parse_num_expr(parse_value(&meta)?)?;
                    set_once(&mut out.maximum, &meta, (key, v))
                }
                "default" => {
                    let v = parse_default(&meta)?;
                    set_once(&mut out.default, &meta, (key, v))
                }
                "min_items" => {
                    let v = parse_count(&meta)?;
                    set_once(&mut out.min_items, &meta, (key, v))
                }
                "max_items" => {
                    let v = parse_count(&meta)?;
                    set_once(&mut out.max_items, &meta, (key, v))
                }
                other => Err(meta.error(format!(
                    "unknown #[form] option `{other}`; expected one of: {FIELD_OPTIONS}"
                ))),
            }
        });
        if let Err(e) = result {
            errors.push(e);
        }
    }
    errors.check()?;
    Ok(out)
}

/// Parses every `#[form(...)]` on an enum variant: only `title = "..."`.
pub(crate) fn variant_form(attrs: &[Attribute]) -> syn::Result<Option<LitStr>> {
    let mut title = None;
    let mut errors = Errors::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("form")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("title") {
                let v = parse_str(&meta)?;
                set_once(&mut title, &meta, v)
            } else {
                Err(meta.error(
                    "unknown #[form] option on a variant; the only one is `title = \"...\"`",
                ))
            }
        });
        if let Err(e) = result {
            errors.push(e);
        }
    }
    errors.check()?;
    Ok(title)
}

/// What `#[serde(...)]` on a struct or enum says about deserializing.
#[derive(Default)]
pub(crate) struct SerdeContainer {
    pub rename_all: Option<RenameRule>,
    /// `#[serde(default)]`: every field may be missing.
    pub default: bool,
    /// An attribute that makes serde read some other shape than the fields or variants
    /// (`transparent`, `from`, `try_from`, `untagged`, `tag`, `content`), with its key.
    pub other_shape: Option<Ident>,
}

/// Parses the `#[serde(...)]` attributes of a struct or enum.
pub(crate) fn serde_container(attrs: &[Attribute]) -> syn::Result<SerdeContainer> {
    let mut out = SerdeContainer::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(ToString::to_string);
            match key.as_deref() {
                Some("rename_all") => {
                    // An unknown rule is reported by serde's own derive.
                    if let Some(lit) = parse_serde_name(&meta)? {
                        out.rename_all = RenameRule::parse(&lit.value());
                    }
                }
                Some("default") => {
                    out.default = true;
                    skip_meta(&meta)?;
                }
                Some("transparent" | "from" | "try_from" | "untagged" | "tag" | "content") => {
                    if out.other_shape.is_none() {
                        out.other_shape = meta.path.get_ident().cloned();
                    }
                    skip_meta(&meta)?;
                }
                _ => skip_meta(&meta)?,
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// What `#[serde(...)]` on a field or variant says about deserializing.
#[derive(Default)]
pub(crate) struct SerdeMember {
    pub rename: Option<LitStr>,
    /// `#[serde(default)]` or `#[serde(default = "...")]`.
    pub default: bool,
    /// `skip` or `skip_deserializing`.
    pub skip: bool,
    /// `flatten`, with its span.
    pub flatten: Option<Span>,
    /// `with` or `deserialize_with`: serde does not read the field's own type.
    pub custom: bool,
}

/// Parses the `#[serde(...)]` attributes of a field or variant.
pub(crate) fn serde_member(attrs: &[Attribute]) -> syn::Result<SerdeMember> {
    let mut out = SerdeMember::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(ToString::to_string);
            match key.as_deref() {
                Some("rename") => {
                    if let Some(lit) = parse_serde_name(&meta)? {
                        out.rename = Some(lit);
                    }
                }
                Some("default") => {
                    out.default = true;
                    skip_meta(&meta)?;
                }
                Some("skip" | "skip_deserializing") => out.skip = true,
                Some("flatten") => out.flatten = Some(meta.path.span()),
                Some("with" | "deserialize_with") => {
                    out.custom = true;
                    skip_meta(&meta)?;
                }
                _ => skip_meta(&meta)?,
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// The doc comment of an item as one description: each line trimmed, the lines of a
/// paragraph joined with spaces, and paragraphs separated by a blank line. `None` when
/// there is no doc comment or it is blank.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) = &nv.value
        {
            // `split`, not `lines`: an empty `///` line is a paragraph break.
            lines.extend(s.value().split('\n').map(|l| l.trim().to_owned()));
        }
    }
    join_doc_lines(&lines)
}

/// See [`doc_text`].
pub(crate) fn join_doc_lines(lines: &[String]) -> Option<String> {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in lines {
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    if paragraphs.is_empty() {
        None
    } else {
        Some(paragraphs.join("\n\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn doc_lines_are_trimmed_and_joined() {
        let field: syn::Field = parse_quote! {
            /// Really delete
            ///    it?
            ///
            /// Second paragraph.
            ///
            confirm: bool
        };
        assert_eq!(
            doc_text(&field.attrs).as_deref(),
            Some("Really delete it?\n\nSecond paragraph.")
        );
        let blank: syn::Field = parse_quote! {
            ///
            ///
            x: bool
        };
        assert_eq!(doc_text(&blank.attrs), None);
    }

    #[test]
    fn serde_member_reads_deserialize_name_and_flags() {
        let field: syn::Field = parse_quote! {
            #[serde(rename(serialize = "out", deserialize = "in"), default = "f", alias = "x")]
            #[serde(skip_serializing_if = "Option::is_none", with = "m")]
            a: u8
        };
        let s = serde_member(&field.attrs).unwrap();
        assert_eq!(s.rename.unwrap().value(), "in");
        assert!(s.default);
        assert!(s.custom);
        assert!(!s.skip);
        let field: syn::Field = parse_quote! {
            #[serde(rename = "b", skip_deserializing)]
            a: u8
        };
        let s = serde_member(&field.attrs).unwrap();
        assert_eq!(s.rename.unwrap().value(), "b");
        assert!(s.skip);
    }

    #[test]
    fn serde_container_reads_rename_all_and_shape() {
        let item: syn::DeriveInput = parse_quote! {
            #[serde(rename_all(deserialize = "kebab-case"), deny_unknown_fields, default)]
            #[serde(bound(deserialize = "T: Clone"))]
            struct S { a: u8 }
        };
        let c = serde_container(&item.attrs).unwrap();
        assert_eq!(c.rename_all, Some(RenameRule::Kebab));
        assert!(c.default);
        assert!(c.other_shape.is_none());
        let item: syn::DeriveInput = parse_quote! {
            #[serde(transparent)]
            struct S { a: u8 }
        };
        assert_eq!(
            serde_container(&item.attrs)
                .unwrap()
                .other_shape
                .unwrap()
                .to_string(),
            "transparent"
        );
    }

    #[test]
    fn field_form_parses_every_option() {
        let field: syn::Field = parse_quote! {
            #[form(title = "T", description = "D", min_length = 1, max_length = 9)]
            #[form(format = "date-time", minimum = -3, maximum = 2.5, default = ["a", "b"])]
            #[form(min_items = 1, max_items = 2)]
            a: u8
        };
        let f = field_form(&field.attrs).unwrap();
        assert_eq!(f.title.unwrap().value(), "T");
        assert_eq!(f.description.unwrap().value(), "D");
        assert_eq!(f.min_length.unwrap().1, 1);
        assert_eq!(f.max_length.unwrap().1, 9);
        assert!(f.format.unwrap().1 == Format::DateTime);
        assert_eq!(f.minimum.unwrap().1.as_i128(), -3);
        assert_eq!(f.maximum.unwrap().1.as_f64(), 2.5);
        assert!(matches!(f.default, Some((_, DefaultLit::Array(_, ref v))) if v.len() == 2));
        assert_eq!(f.min_items.unwrap().1, 1);
        assert_eq!(f.max_items.unwrap().1, 2);
    }

    #[test]
    fn field_form_errors() {
        let cases: Vec<(syn::Field, &str)> = vec![
            (
                parse_quote! { #[form(colour = "red")] a: u8 },
                "unknown #[form] option `colour`",
            ),
            (
                parse_quote! { #[form(format = "phone")] a: String },
                "unsupported format \"phone\"",
            ),
            (
                parse_quote! { #[form(title = "a", title = "b")] a: String },
                "duplicate `title`",
            ),
            (
                parse_quote! { #[form(min_length = -1)] a: String },
                "expected a non-negative integer literal",
            ),
            (
                parse_quote! { #[form(default = some_fn())] a: String },
                "`default` must be a string, number or boolean literal",
            ),
            (
                parse_quote! { #[form(default = ["a", 1])] a: Vec<E> },
                "array of string literals",
            ),
            (
                parse_quote! { #[form(maximum = 99999999999999999999)] a: u64 },
                "does not fit the range of a JSON integer",
            ),
            (
                parse_quote! { #[form(title = 3)] a: u64 },
                "expected a string literal",
            ),
        ];
        for (field, want) in cases {
            let err = match field_form(&field.attrs) {
                Ok(_) => panic!("expected an error containing {want:?}"),
                Err(e) => e.to_string(),
            };
            assert!(err.contains(want), "{err:?} does not contain {want:?}");
        }
    }
}
