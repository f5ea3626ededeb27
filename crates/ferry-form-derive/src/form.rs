//! `#[derive(Form)]`.

use std::collections::HashMap;

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Ident, LitStr, Type};

use crate::attr::{self, DefaultLit, Errors, FieldForm, NumLit};

/// Rejects generic parameters: a form's shape must be known when the derive runs.
pub(crate) fn reject_generics(input: &DeriveInput, derive: &str) -> syn::Result<()> {
    if input.generics.params.is_empty() && input.generics.where_clause.is_none() {
        return Ok(());
    }
    Err(syn::Error::new_spanned(
        &input.generics,
        format!(
            "{derive} cannot be derived for a generic type; a form's fields must have \
             concrete types (use a concrete type or a type alias per form)"
        ),
    ))
}

/// Gives every token the same span, so that a compiler error in code built from them
/// points at one place in the user's source.
pub(crate) fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let TokenTree::Group(group) = &tt {
                let mut new =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                new.set_span(span);
                tt = TokenTree::Group(new);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// A string literal for a `panic!` message in generated code, with braces escaped.
fn panic_message(text: &str) -> LitStr {
    LitStr::new(
        &text.replace('{', "{{").replace('}', "}}"),
        Span::call_site(),
    )
}

/// Counts characters as JSON Schema does (Unicode scalar values).
fn char_len(s: &str) -> u64 {
    s.chars().count() as u64
}

pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let container = attr::container_form(&input.attrs)?;
    reject_generics(input, "Form")?;
    let fields = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => &named.named,
            _ => {
                return Err(syn::Error::new_spanned(
                    &input.ident,
                    "Form can only be derived for a struct with named fields: each field \
                     becomes a property of the form",
                ));
            }
        },
        Data::Enum(_) => {
            return Err(syn::Error::new_spanned(
                &input.ident,
                "Form is derived for structs; for the options of a select field derive \
                 FormEnum on the enum instead",
            ));
        }
        Data::Union(_) => {
            return Err(syn::Error::new_spanned(
                &input.ident,
                "Form can only be derived for a struct with named fields",
            ));
        }
    };
    let serde = attr::serde_container(&input.attrs)?;
    if let Some(key) = &serde.other_shape {
        return Err(syn::Error::new_spanned(
            key,
            format!(
                "Form cannot be derived for a struct with #[serde({key})]: the form's \
                 properties must be the struct's own fields"
            ),
        ));
    }
    let rule = serde.rename_all;
    let krate = &container.krate;

    let mut errors = Errors::default();
    let mut seen: HashMap<String, Ident> = HashMap::new();
    let mut blocks = Vec::new();
    let mut probes = Vec::new();

    for field in fields {
        let Some(ident) = &field.ident else { continue };
        let (serde_field, form) = match (
            attr::serde_member(&field.attrs),
            attr::field_form(&field.attrs),
        ) {
            (Ok(s), Ok(f)) => (s, f),
            (s, f) => {
                if let Err(e) = s {
                    errors.push(e);
                }
                if let Err(e) = f {
                    errors.push(e);
                }
                continue;
            }
        };
        if let Some(span) = serde_field.flatten {
            errors.push(syn::Error::new(
                span,
                format!(
                    "field `{ident}`: #[serde(flatten)] is not supported; MCP elicitation \
                     forms are flat, so list the fields here directly"
                ),
            ));
            continue;
        }
        if serde_field.skip {
            if !form.is_empty() {
                errors.push(syn::Error::new_spanned(
                    ident,
                    format!(
                        "field `{ident}` is skipped by serde, so it is not part of the form \
                         and its #[form] options have no effect; remove them"
                    ),
                ));
            }
            continue;
        }
        let bare = ident.unraw().to_string();
        let name = match &serde_field.rename {
            Some(lit) => lit.value(),
            None => match rule {
                Some(rule) => rule.apply_to_field(&bare),
                None => bare.clone(),
            },
        };
        if let Some(previous) = seen.get(&name) {
            errors.push(syn::Error::new_spanned(
                ident,
                format!(
                    "field `{ident}` has the property name {name:?}, which field `{previous}` \
                     already has"
                ),
            ));
            continue;
        }
        seen.insert(name.clone(), ident.clone());
        let optional = serde.default || serde_field.default;
        match field_block(
            krate,
            &bare,
            &name,
            &field.ty,
            &field.attrs,
            &form,
            optional,
        ) {
            Ok(block) => blocks.push(block),
            Err(e) => errors.push(e),
        }
        if !serde_field.custom {
            let ty = &field.ty;
            probes.push(quote_spanned! {ty.span()=>
                if let ::core::option::Option::Some(error) =
                    #krate::__private::probe::<#ty>(__ferry_content, #name)
                {
                    return ::core::option::Option::Some(error);
                }
            });
        }
    }
    errors.check()?;

    let name = &input.ident;
    Ok(quote! {
        #[automatically_derived]
        impl #krate::Form for #name {
            fn form_schema() -> #krate::FormSchema {
                let mut __ferry_builder = #krate::__private::SchemaBuilder::new();
                #(#blocks)*
                __ferry_builder.finish()
            }

            #[doc(hidden)]
            fn __field_error(
                __ferry_content: &#krate::__private::serde_json::Map<
                    ::std::string::String,
                    #krate::__private::serde_json::Value,
                >,
            ) -> ::core::option::Option<#krate::FormError> {
                #(#probes)*
                let _ = __ferry_content;
                ::core::option::Option::None
            }
        }
    })
}

/// The code that adds one field to the schema builder, with the compile-time checks of its
/// options.
fn field_block(
    krate: &TokenStream,
    bare: &str,
    name: &str,
    ty: &Type,
    attrs: &[syn::Attribute],
    form: &FieldForm,
    optional: bool,
) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let mut checks = Vec::new();
    let mut setters = Vec::new();
    let ty_tokens = quote!(#ty);

    // A check that the field's type implements a marker trait, reported at `span`.
    let marker_check = |span: Span, function: &str| {
        let function = Ident::new(function, Span::call_site());
        let ty = respan(ty_tokens.clone(), span);
        let call = respan(quote!(#krate::__private::#function::<#ty>()), span);
        quote_spanned!(span=> const _: () = #call;)
    };

    if let Some(title) = &form.title {
        setters.push(quote!(__ferry_property.set_title(#title);));
    }
    let description = match &form.description {
        Some(lit) => Some(lit.value()),
        None => attr::doc_text(attrs),
    };
    if let Some(description) = description.filter(|d| !d.is_empty()) {
        setters.push(quote!(__ferry_property.set_description(#description);));
    }

    // Text options.
    let string_key = [&form.min_length, &form.max_length]
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
        .chain(form.format.as_ref().map(|(k, _)| k))
        .next();
    if let Some(key) = string_key {
        checks.push(marker_check(key.span(), "string_field"));
    }
    if let Some((_, n)) = &form.min_length {
        setters.push(quote!(__ferry_property.set_min_length(#n);));
    }
    if let Some((_, n)) = &form.max_length {
        setters.push(quote!(__ferry_property.set_max_length(#n);));
    }
    if let (Some((_, min)), Some((key, max))) = (&form.min_length, &form.max_length)
        && min > max
    {
        errors.push(syn::Error::new_spanned(
            key,
            format!("field `{bare}`: max_length {max} is less than min_length {min}"),
        ));
    }
    if let Some((_, format)) = &form.format {
        let variant = format.variant();
        setters.push(quote!(__ferry_property.set_format(#krate::StringFormat::#variant);));
    }

    // Number options.
    for (label, bound) in [("minimum", &form.minimum), ("maximum", &form.maximum)] {
        let Some((key, lit)) = bound else { continue };
        checks.push(number_check(
            krate,
            &ty_tokens,
            key.span(),
            lit,
            bare,
            label,
        ));
        let number = lit.number_tokens(krate);
        let setter = format_ident!("set_{}", label);
        setters.push(quote!(__ferry_property.#setter(#number);));
    }
    if let (Some((_, min)), Some((key, max))) = (&form.minimum, &form.maximum)
        && min.greater_than(max)
    {
        errors.push(syn::Error::new_spanned(
            key,
            format!("field `{bare}`: maximum is less than minimum"),
        ));
    }

    // Multi-select options.
    if let Some((key, _)) = form.min_items.as_ref().or(form.max_items.as_ref()) {
        checks.push(marker_check(key.span(), "multi_select_field"));
    }
    if let Some((key, n)) = &form.min_items {
        setters.push(quote!(__ferry_property.set_min_items(#n);));
        let span = key.span();
        let ty = respan(ty_tokens.clone(), span);
        let message = panic_message(&format!(
            "field `{bare}`: min_items {n} is more than the number of options of the \
             field's enum"
        ));
        let call = respan(quote!(#krate::__private::min_items_ok::<#ty>(#n)), span);
        checks.push(quote_spanned!(span=> const _: () = ::core::assert!(#call, #message);));
    }
    if let Some((_, n)) = &form.max_items {
        setters.push(quote!(__ferry_property.set_max_items(#n);));
    }
    if let (Some((_, min)), Some((key, max))) = (&form.min_items, &form.max_items)
        && min > max
    {
        errors.push(syn::Error::new_spanned(
            key,
            format!("field `{bare}`: max_items {max} is less than min_items {min}"),
        ));
    }

    // The default.
    if let Some((key, default)) = &form.default {
        let span = key.span();
        match default {
            DefaultLit::Str(lit) => {
                let value = lit.value();
                let len = char_len(&value);
                if let Some((_, min)) = &form.min_length
                    && len < *min
                {
                    errors.push(syn::Error::new_spanned(
                        lit,
                        format!("field `{bare}`: the default is shorter than min_length {min}"),
                    ));
                }
                if let Some((_, max)) = &form.max_length
                    && len > *max
                {
                    errors.push(syn::Error::new_spanned(
                        lit,
                        format!("field `{bare}`: the default is longer than max_length {max}"),
                    ));
                }
                let ty = respan(ty_tokens.clone(), span);
                let message = panic_message(&format!(
                    "field `{bare}`: `default = {value:?}` is not one of the options of the \
                     field's enum"
                ));
                let call = respan(quote!(#krate::__private::str_default_ok::<#ty>(#lit)), span);
                checks.push(quote_spanned!(span=> const _: () = ::core::assert!(#call, #message);));
                if let Some((_, format)) = &form.format {
                    let variant = format.variant();
                    let message = panic_message(&format!(
                        "field `{bare}`: `default = {value:?}` is not a valid {} value",
                        match format {
                            attr::Format::Email => "email",
                            attr::Format::Uri => "uri",
                            attr::Format::Date => "date",
                            attr::Format::DateTime => "date-time",
                        }
                    ));
                    let call = respan(quote!(#krate::StringFormat::#variant.matches(#lit)), span);
                    checks.push(
                        quote_spanned!(span=> const _: () = ::core::assert!(#call, #message);),
                    );
                }
                setters.push(quote!(
                    __ferry_property.set_default(#krate::__private::serde_json::Value::String(
                        ::std::string::String::from(#lit)
                    ));
                ));
            }
            DefaultLit::Num(lit) => {
                checks.push(number_check(krate, &ty_tokens, span, lit, bare, "default"));
                if let Some((_, min)) = &form.minimum
                    && min.greater_than(lit)
                {
                    errors.push(syn::Error::new_spanned(
                        &lit.expr,
                        format!("field `{bare}`: the default is less than the minimum"),
                    ));
                }
                if let Some((_, max)) = &form.maximum
                    && lit.greater_than(max)
                {
                    errors.push(syn::Error::new_spanned(
                        &lit.expr,
                        format!("field `{bare}`: the default is greater than the maximum"),
                    ));
                }
                let number = lit.number_tokens(krate);
                setters.push(quote!(
                    __ferry_property.set_default(#krate::__private::serde_json::Value::Number(#number));
                ));
            }
            DefaultLit::Bool(lit) => {
                checks.push(marker_check(span, "boolean_field"));
                setters.push(quote!(
                    __ferry_property.set_default(#krate::__private::serde_json::Value::Bool(#lit));
                ));
            }
            DefaultLit::Array(array, items) => {
                let count = items.len() as u64;
                if let Some((_, min)) = &form.min_items
                    && count < *min
                {
                    errors.push(syn::Error::new_spanned(
                        array,
                        format!("field `{bare}`: the default selects fewer than min_items {min}"),
                    ));
                }
                if let Some((_, max)) = &form.max_items
                    && count > *max
                {
                    errors.push(syn::Error::new_spanned(
                        array,
                        format!("field `{bare}`: the default selects more than max_items {max}"),
                    ));
                }
                for (i, item) in items.iter().enumerate() {
                    if items[..i]
                        .iter()
                        .any(|earlier| earlier.value() == item.value())
                    {
                        errors.push(syn::Error::new_spanned(
                            item,
                            format!(
                                "field `{bare}`: the default selects {:?} twice",
                                item.value()
                            ),
                        ));
                    }
                }
                let ty = respan(ty_tokens.clone(), span);
                let call = respan(
                    quote!(#krate::__private::multi_default_check::<#ty>(&[#(#items),*])),
                    span,
                );
                let arms = items.iter().enumerate().map(|(i, item)| {
                    let index = i + 1;
                    let message = panic_message(&format!(
                        "field `{bare}`: the default selects {:?}, which is not one of the \
                         options of the field's enum",
                        item.value()
                    ));
                    quote_spanned!(span=> #index => ::core::panic!(#message),)
                });
                checks.push(quote_spanned! {span=>
                    const _: () = match #call {
                        #(#arms)*
                        _ => {}
                    };
                });
                setters.push(quote!(
                    __ferry_property.set_default(#krate::__private::serde_json::Value::Array(
                        ::std::vec![#(#krate::__private::serde_json::Value::String(
                            ::std::string::String::from(#items)
                        )),*]
                    ));
                ));
            }
        }
    }
    errors.check()?;

    // The per-field function: its name carries the field's name, so that a field type
    // that cannot be a form field is reported as "required by a bound in
    // `__ferry_form_field_<name>`".
    let function = format_ident!("__ferry_form_field_{}", bare);
    let call = quote_spanned!(ty.span()=> #function::<#ty>());
    Ok(quote! {
        {
            #[allow(non_snake_case)]
            #[inline]
            fn #function<T: #krate::FormField>() -> #krate::__private::Property {
                #krate::__private::Property::of::<T>()
            }
            #(#checks)*
            let mut __ferry_property = #call;
            #(#setters)*
            __ferry_builder.push(#name, __ferry_property, #optional);
        }
    })
}

/// The compile-time check of a number option: the field must be a number field, and the
/// literal must be a whole number for an integer field and fit the field's type.
fn number_check(
    krate: &TokenStream,
    ty_tokens: &TokenStream,
    span: Span,
    lit: &NumLit,
    bare: &str,
    label: &str,
) -> TokenStream {
    let ty = respan(ty_tokens.clone(), span);
    let integral = lit.is_integral();
    let int_value = lit.as_i128();
    let float_value = lit.as_f64();
    let call = respan(
        quote!(#krate::__private::number_check::<#ty>(#integral, #int_value, #float_value)),
        span,
    );
    let not_integer = panic_message(&format!(
        "field `{bare}`: `{label}` must be a whole number, because the field has an integer type"
    ));
    let out_of_range = panic_message(&format!(
        "field `{bare}`: `{label}` is out of the range of the field's type"
    ));
    quote_spanned! {span=>
        const _: () = match #call {
            1 => ::core::panic!(#not_integer),
            2 => ::core::panic!(#out_of_range),
            _ => {}
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn error_of(input: DeriveInput) -> String {
        match expand(&input) {
            Ok(tokens) => panic!("expected an error, got {tokens}"),
            Err(e) => e
                .into_iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    #[test]
    fn expands_a_plain_struct() {
        let input: DeriveInput = parse_quote! {
            #[serde(rename_all = "camelCase")]
            struct Confirm {
                /// Really delete it?
                #[form(title = "Confirm")]
                really_confirm: bool,
                #[serde(skip)]
                ignored: Vec<u8>,
            }
        };
        let out = expand(&input).unwrap().to_string();
        assert!(out.contains("__ferry_form_field_really_confirm"));
        assert!(out.contains("\"reallyConfirm\""));
        assert!(out.contains("\"Really delete it?\""));
        assert!(!out.contains("ignored"));
    }

    #[test]
    fn refuses_shapes_that_are_not_forms() {
        let cases: Vec<(DeriveInput, &str)> = vec![
            (parse_quote! { struct T(u8); }, "named fields"),
            (parse_quote! { struct U; }, "named fields"),
            (
                parse_quote! { enum E { A } },
                "derive FormEnum on the enum instead",
            ),
            (parse_quote! { union X { a: u8 } }, "named fields"),
            (parse_quote! { struct G<T> { a: T } }, "generic type"),
            (
                parse_quote! { #[serde(transparent)] struct S { a: u8 } },
                "#[serde(transparent)]",
            ),
            (
                parse_quote! { struct S { #[serde(flatten)] inner: Inner } },
                "#[serde(flatten)] is not supported",
            ),
            (
                parse_quote! { struct S { a: u8, #[serde(rename = "a")] b: u8 } },
                "already has",
            ),
            (
                parse_quote! { struct S { #[serde(skip)] #[form(title = "x")] a: u8 } },
                "skipped by serde",
            ),
            (
                parse_quote! { #[form(title = "x")] struct S { a: u8 } },
                "the only one is `crate",
            ),
        ];
        for (input, want) in cases {
            let err = error_of(input);
            assert!(err.contains(want), "{err:?} does not contain {want:?}");
        }
    }

    #[test]
    fn checks_option_consistency() {
        let cases: Vec<(DeriveInput, &str)> = vec![
            (
                parse_quote! { struct S { #[form(min_length = 5, max_length = 2)] a: String } },
                "max_length 2 is less than min_length 5",
            ),
            (
                parse_quote! { struct S { #[form(minimum = 5, maximum = 2.5)] a: f64 } },
                "maximum is less than minimum",
            ),
            (
                parse_quote! { struct S { #[form(min_items = 3, max_items = 1)] a: Vec<E> } },
                "max_items 1 is less than min_items 3",
            ),
            (
                parse_quote! { struct S { #[form(min_length = 3, default = "ab")] a: String } },
                "shorter than min_length 3",
            ),
            (
                parse_quote! { struct S { #[form(max_length = 1, default = "ab")] a: String } },
                "longer than max_length 1",
            ),
            (
                parse_quote! { struct S { #[form(minimum = 3, default = 2)] a: u8 } },
                "less than the minimum",
            ),
            (
                parse_quote! { struct S { #[form(maximum = 3, default = 4.5)] a: f32 } },
                "greater than the maximum",
            ),
            (
                parse_quote! { struct S { #[form(max_items = 1, default = ["a", "b"])] a: Vec<E> } },
                "more than max_items 1",
            ),
            (
                parse_quote! { struct S { #[form(min_items = 2, default = ["a"])] a: Vec<E> } },
                "fewer than min_items 2",
            ),
            (
                parse_quote! { struct S { #[form(default = ["a", "a"])] a: Vec<E> } },
                "selects \"a\" twice",
            ),
        ];
        for (input, want) in cases {
            let err = error_of(input);
            assert!(err.contains(want), "{err:?} does not contain {want:?}");
        }
    }

    #[test]
    fn crate_path_can_be_changed() {
        let input: DeriveInput = parse_quote! {
            #[form(crate = "ferry::form")]
            struct S { a: u8 }
        };
        let out = expand(&input).unwrap().to_string();
        assert!(out.contains("ferry :: form :: Form"));
        assert!(!out.contains(":: ferry_form ::"));
    }
}
