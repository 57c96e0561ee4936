//! Procedural macros of the `geist` client, re-exported from `geist`.
//!
//! `#[geist::test]` turns a property `fn name(tc: &mut TestCase)` into a
//! `#[test]` that runs it with [`geist::check`], named after its path, and
//! rewrites `let x = tc.draw(..)` into `tc.draw_named("x", ..)` so failure
//! reports name the values. `#[derive(Generate)]` builds values of structs
//! and enums field by field from each field type's `Generate` impl (or a
//! `#[geist(with = generator)]` given on the field).

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::visit_mut::VisitMut;
use syn::{
    Data, DeriveInput, Error, Expr, Fields, FnArg, Ident, ItemFn, Pat, ReturnType, Token,
    parse_macro_input, parse_quote,
};

/// One `key = value` argument of `#[geist::test(...)]`.
struct TestArgument {
    key: Ident,
    value: Expr,
}

impl Parse for TestArgument {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let key: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        let value: Expr = input.parse()?;
        Ok(TestArgument { key, value })
    }
}

/// Marks a property test: `fn name(tc: &mut TestCase)` runs under
/// `geist::check` as a `#[test]`.
///
/// Arguments: `test_cases = N`, `seed = N`, `derandomize = bool`,
/// `max_shrink_calls = N`, or `settings = expr` (a `geist::Settings` that
/// the other arguments then adjust).
#[proc_macro_attribute]
pub fn test(attr: TokenStream, item: TokenStream) -> TokenStream {
    let arguments = match Punctuated::<TestArgument, Token![,]>::parse_terminated.parse(attr) {
        Ok(arguments) => arguments,
        Err(e) => return e.to_compile_error().into(),
    };
    let function = parse_macro_input!(item as ItemFn);
    match expand_test(arguments, function) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand_test(
    arguments: Punctuated<TestArgument, Token![,]>,
    mut function: ItemFn,
) -> syn::Result<TokenStream2> {
    if function.sig.inputs.len() != 1 {
        return Err(Error::new_spanned(
            &function.sig.inputs,
            "a geist test takes exactly one argument: `tc: &mut geist::TestCase`",
        ));
    }
    if !matches!(function.sig.output, ReturnType::Default) {
        return Err(Error::new_spanned(
            &function.sig.output,
            "a geist test returns nothing: a panic is a failure",
        ));
    }
    if function.sig.asyncness.is_some() {
        return Err(Error::new_spanned(
            function.sig.asyncness,
            "async geist tests are not supported",
        ));
    }
    let Some(FnArg::Typed(parameter)) = function.sig.inputs.first().cloned() else {
        return Err(Error::new_spanned(
            &function.sig.inputs,
            "a geist test takes `tc: &mut geist::TestCase`, not `self`",
        ));
    };
    let mut settings = quote!(::geist::Settings::new());
    let mut adjustments = Vec::new();
    for TestArgument { key, value } in arguments {
        match key.to_string().as_str() {
            "settings" => settings = quote!((#value)),
            "test_cases" => adjustments.push(quote!(.test_cases(#value))),
            "seed" => adjustments.push(quote!(.seed(::core::option::Option::Some(#value)))),
            "derandomize" => adjustments.push(quote!(.derandomize(#value))),
            "max_shrink_calls" => adjustments.push(quote!(.max_shrink_calls(#value))),
            other => {
                return Err(Error::new_spanned(
                    key,
                    format!(
                        "unknown geist::test argument `{other}`; expected test_cases, seed, derandomize, max_shrink_calls or settings"
                    ),
                ));
            }
        }
    }
    if let Pat::Ident(binding) = parameter.pat.as_ref() {
        NameDraws {
            test_case: binding.ident.clone(),
        }
        .visit_block_mut(&mut function.block);
    }
    let pattern = &parameter.pat;
    let ty = &parameter.ty;
    let body = &function.block;
    let name = &function.sig.ident;
    let attributes = &function.attrs;
    let visibility = &function.vis;
    Ok(quote! {
        #[test]
        #(#attributes)*
        #visibility fn #name() {
            let settings = #settings
                .name(::core::concat!(::core::module_path!(), "::", ::core::stringify!(#name)))
                #(#adjustments)*;
            ::geist::check(settings, |#pattern: #ty| #body);
        }
    })
}

/// Rewrites `let x = tc.draw(g);` into `let x = tc.draw_named("x", g);`.
struct NameDraws {
    test_case: Ident,
}

impl VisitMut for NameDraws {
    fn visit_local_mut(&mut self, local: &mut syn::Local) {
        syn::visit_mut::visit_local_mut(self, local);
        let binding = match &local.pat {
            Pat::Ident(p) => Some(p.ident.clone()),
            Pat::Type(t) => match t.pat.as_ref() {
                Pat::Ident(p) => Some(p.ident.clone()),
                _ => None,
            },
            _ => None,
        };
        let (Some(binding), Some(init)) = (binding, local.init.as_mut()) else {
            return;
        };
        let Expr::MethodCall(call) = init.expr.as_mut() else {
            return;
        };
        let on_test_case = matches!(call.receiver.as_ref(),
            Expr::Path(p) if p.path.is_ident(&self.test_case));
        if call.method == "draw" && on_test_case && call.args.len() == 1 {
            let name = binding.to_string();
            call.method = Ident::new("draw_named", call.method.span());
            call.args.insert(0, parse_quote!(#name));
        }
    }
}

/// Derives `geist::Generate`: values are built field by field (for enums, a
/// variant is chosen first, shrinking toward the first variant). A field's
/// generator can be given with `#[geist(with = generator_expression)]`.
#[proc_macro_derive(Generate, attributes(geist))]
pub fn derive_generate(item: TokenStream) -> TokenStream {
    let input = parse_macro_input!(item as DeriveInput);
    match expand_generate(input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// The generator given by `#[geist(with = ...)]` on a field, if any.
fn field_generator(attributes: &[syn::Attribute]) -> syn::Result<Option<Expr>> {
    let mut found = None;
    for attribute in attributes {
        if !attribute.path().is_ident("geist") {
            continue;
        }
        attribute.parse_nested_meta(|meta| {
            if meta.path.is_ident("with") {
                found = Some(meta.value()?.parse::<Expr>()?);
                Ok(())
            } else {
                Err(meta.error("expected `with = generator`"))
            }
        })?;
    }
    Ok(found)
}

/// An expression building `fields` (as the body of a constructor `path`).
fn build_fields(path: TokenStream2, fields: &Fields) -> syn::Result<TokenStream2> {
    let tc = Ident::new("tc", Span::mixed_site());
    let value = |field: &syn::Field| -> syn::Result<TokenStream2> {
        let ty = &field.ty;
        Ok(match field_generator(&field.attrs)? {
            Some(generator) => quote!(#tc.draw_silent(#generator)),
            None => quote!(<#ty as ::geist::Generate>::generate_value(#tc)),
        })
    };
    Ok(match fields {
        Fields::Unit => path,
        Fields::Named(named) => {
            let mut parts = Vec::new();
            for field in &named.named {
                let name = &field.ident;
                let v = value(field)?;
                parts.push(quote!(#name: #v));
            }
            quote!(#path { #(#parts),* })
        }
        Fields::Unnamed(unnamed) => {
            let mut parts = Vec::new();
            for field in &unnamed.unnamed {
                parts.push(value(field)?);
            }
            quote!(#path ( #(#parts),* ))
        }
    })
}

fn expand_generate(mut input: DeriveInput) -> syn::Result<TokenStream2> {
    let name = input.ident.clone();
    let tc = Ident::new("tc", Span::mixed_site());
    let body = match &input.data {
        Data::Struct(data) => {
            let build = build_fields(quote!(#name), &data.fields)?;
            quote!(::geist::__private::composite(#tc, |#tc: &mut ::geist::TestCase| #build))
        }
        Data::Enum(data) => {
            if data.variants.is_empty() {
                return Err(Error::new_spanned(
                    &input.ident,
                    "cannot derive Generate for an enum without variants (it has no values)",
                ));
            }
            let count = data.variants.len();
            let mut arms = Vec::new();
            for (index, variant) in data.variants.iter().enumerate() {
                let variant_name = &variant.ident;
                let build = build_fields(quote!(#name::#variant_name), &variant.fields)?;
                arms.push(quote!(#index => #build,));
            }
            let last = format_ident!("_");
            quote!(::geist::__private::variant(#tc, #count, |#tc: &mut ::geist::TestCase, index: usize| {
                match index {
                    #(#arms)*
                    #last => ::core::unreachable!("variant index below the variant count"),
                }
            }))
        }
        Data::Union(_) => {
            return Err(Error::new_spanned(
                &input.ident,
                "cannot derive Generate for a union",
            ));
        }
    };
    // Every type parameter must itself be generatable.
    let type_parameters: Vec<Ident> = input
        .generics
        .type_params()
        .map(|p| p.ident.clone())
        .collect();
    let where_clause = input.generics.make_where_clause();
    for parameter in type_parameters {
        where_clause
            .predicates
            .push(parse_quote!(#parameter: ::geist::Generate));
    }
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        impl #impl_generics ::geist::Generate for #name #type_generics #where_clause {
            fn generate_value(#tc: &mut ::geist::TestCase) -> Self {
                #body
            }
        }
    })
}
