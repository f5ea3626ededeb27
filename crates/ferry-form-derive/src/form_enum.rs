//! `#[derive(FormEnum)]`.

use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::quote;
use syn::ext::IdentExt;
use syn::{Data, DeriveInput, Fields, Ident};

use crate::attr::{self, Errors};
use crate::form::reject_generics;

pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let container = attr::container_form(&input.attrs)?;
    reject_generics(input, "FormEnum")?;
    let Data::Enum(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "FormEnum can only be derived for an enum whose variants are the options of a \
             select field",
        ));
    };
    let serde = attr::serde_container(&input.attrs)?;
    if let Some(key) = &serde.other_shape {
        return Err(syn::Error::new_spanned(
            key,
            format!(
                "FormEnum cannot be derived for an enum with #[serde({key})]: a select \
                 field's answer is the variant's name as a plain string"
            ),
        ));
    }
    let krate = &container.krate;

    let mut errors = Errors::default();
    let mut seen: HashMap<String, Ident> = HashMap::new();
    let mut options = Vec::new();
    let mut arms = Vec::new();
    for variant in &data.variants {
        let ident = &variant.ident;
        if !matches!(variant.fields, Fields::Unit) {
            errors.push(syn::Error::new_spanned(
                variant,
                format!(
                    "variant `{ident}` has fields; FormEnum variants must be unit variants, \
                     because a select option is only a name"
                ),
            ));
            continue;
        }
        let (serde_variant, title) = match (
            attr::serde_member(&variant.attrs),
            attr::variant_form(&variant.attrs),
        ) {
            (Ok(s), Ok(t)) => (s, t),
            (s, t) => {
                if let Err(e) = s {
                    errors.push(e);
                }
                if let Err(e) = t {
                    errors.push(e);
                }
                continue;
            }
        };
        let bare = ident.unraw().to_string();
        let value = match &serde_variant.rename {
            Some(lit) => lit.value(),
            None => match serde.rename_all {
                Some(rule) => rule.apply_to_variant(&bare),
                None => bare.clone(),
            },
        };
        arms.push(quote!(Self::#ident => #value,));
        if serde_variant.skip {
            if title.is_some() {
                errors.push(syn::Error::new_spanned(
                    ident,
                    format!(
                        "variant `{ident}` is skipped by serde, so it is not an option and \
                         its title has no effect; remove it"
                    ),
                ));
            }
            continue;
        }
        if let Some(previous) = seen.get(&value) {
            errors.push(syn::Error::new_spanned(
                ident,
                format!(
                    "variant `{ident}` has the value {value:?}, which `{previous}` already has"
                ),
            ));
            continue;
        }
        seen.insert(value.clone(), ident.clone());
        let title = match title {
            Some(lit) => quote!(::core::option::Option::Some(#lit)),
            None => quote!(::core::option::Option::None),
        };
        options.push(quote!(#krate::FormOption::new(#value, #title)));
    }
    errors.check()?;
    if options.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "FormEnum needs at least one variant that serde deserializes: a select field \
             needs at least one option",
        ));
    }

    let name = &input.ident;
    Ok(quote! {
        #[automatically_derived]
        impl #krate::__private::Sealed for #name {}

        #[automatically_derived]
        impl #krate::FormEnum for #name {
            const OPTIONS: &'static [#krate::FormOption] = &[#(#options),*];

            fn form_value(&self) -> &'static str {
                match self {
                    #(#arms)*
                }
            }
        }

        #[automatically_derived]
        impl #krate::FormField for #name {
            #[doc(hidden)]
            fn __property() -> #krate::__private::Property {
                #krate::__private::Property::single_select(
                    <Self as #krate::FormEnum>::OPTIONS,
                )
            }
        }

        #[automatically_derived]
        impl #krate::__private::StrDefault for #name {
            const OPTIONS: ::core::option::Option<&'static [#krate::FormOption]> =
                ::core::option::Option::Some(<Self as #krate::FormEnum>::OPTIONS);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn expands_renamed_and_titled_variants() {
        let input: DeriveInput = parse_quote! {
            #[serde(rename_all = "kebab-case")]
            enum Color {
                #[form(title = "Bright red")]
                BrightRed,
                #[serde(rename = "GREEN")]
                Green,
                #[serde(skip)]
                Hidden,
            }
        };
        let out = expand(&input).unwrap().to_string();
        assert!(out.contains("FormOption :: new (\"bright-red\" , :: core :: option :: Option :: Some (\"Bright red\"))"));
        assert!(
            out.contains("FormOption :: new (\"GREEN\" , :: core :: option :: Option :: None)")
        );
        assert!(!out.contains("FormOption :: new (\"hidden\""));
        assert!(out.contains("Self :: Hidden => \"hidden\""));
    }

    #[test]
    fn refuses_enums_that_are_not_selects() {
        let cases: Vec<(DeriveInput, &str)> = vec![
            (
                parse_quote! { struct S { a: u8 } },
                "only be derived for an enum",
            ),
            (parse_quote! { enum E { A(u8) } }, "must be unit variants"),
            (
                parse_quote! { enum E { A { x: u8 } } },
                "must be unit variants",
            ),
            (parse_quote! { enum E {} }, "at least one variant"),
            (
                parse_quote! { enum E { #[serde(skip)] A } },
                "at least one variant",
            ),
            (
                parse_quote! { #[serde(untagged)] enum E { A } },
                "#[serde(untagged)]",
            ),
            (
                parse_quote! { #[serde(tag = "t")] enum E { A } },
                "#[serde(tag)]",
            ),
            (parse_quote! { enum E<T> { A, B(T) } }, "generic type"),
            (
                parse_quote! { enum E { A, #[serde(rename = "A")] B } },
                "which `A` already has",
            ),
            (
                parse_quote! { enum E { #[form(label = "x")] A } },
                "the only one is `title",
            ),
        ];
        for (input, want) in cases {
            let err = match expand(&input) {
                Ok(tokens) => panic!("expected an error, got {tokens}"),
                Err(e) => e.to_string(),
            };
            assert!(err.contains(want), "{err:?} does not contain {want:?}");
        }
    }
}
