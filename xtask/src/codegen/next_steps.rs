//! What `cargo xtask codegen` prints after writing: for each operation of the generated `Api`
//! trait that `service/src/http/api.rs` does not implement yet (or that the previous generated
//! trait did not have), the steps from "added to the spec" to "implemented and tested", with a
//! method stub that compiles when pasted into `impl Api for KoboApi`.
//!
//! rustc's own suggestion for a missing trait method prints types without their path
//! (`AcceptInviteRequest`, not `models::AcceptInviteRequest`) and keeps the trait's
//! `impl Future` return, so pasted as it is it does not compile: the stub here is rendered from
//! the generated trait instead, as `async fn` with `models::` paths and the service's
//! `Principal`, the way `service/src/http/api.rs` imports them.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use anyhow::{Context, Result};
use quote::quote;

/// Where the steps are documented once.
pub const GUIDE: &str = "docs/adding-an-operation.md";
/// The service's implementation of the trait.
pub const SERVICE_API: &str = "service/src/http/api.rs";
/// The generated trait.
pub const GENERATED_API: &str = "generated-server/src/generated/api.rs";

/// What the next steps need to know of one operation.
#[derive(Debug, Clone)]
pub struct OperationFacts {
    pub id: String,
    /// The `Operation` variant (`AcceptInvite`).
    pub variant: String,
    /// The token family's scheme, `None` for a public operation.
    pub family: Option<String>,
    /// The names of its request examples, which the conformance story must replay.
    pub request_examples: Vec<String>,
}

/// The operation methods of the trait `Api` in a generated `api.rs` (those taking a `ctx`), by
/// name, each rendered as a stub for `impl Api for KoboApi`.
pub fn trait_methods(generated_api: &str) -> Result<Vec<(String, String)>> {
    let file = syn::parse_file(generated_api).context("parsing the generated api.rs")?;
    let mut methods = Vec::new();
    for item in &file.items {
        let syn::Item::Trait(api) = item else {
            continue;
        };
        if api.ident != "Api" {
            continue;
        }
        for item in &api.items {
            let syn::TraitItem::Fn(method) = item else {
                continue;
            };
            let takes_ctx = method.sig.inputs.iter().any(|input| {
                matches!(input, syn::FnArg::Typed(typed)
                    if matches!(&*typed.pat, syn::Pat::Ident(ident) if ident.ident == "ctx"))
            });
            if takes_ctx {
                methods.push((method.sig.ident.to_string(), stub(&method.sig)?));
            }
        }
    }
    Ok(methods)
}

/// `sig` as an `async fn` returning what its future outputs, formatted, with a body that answers
/// `09` (not implemented yet, HTTP 501) rather than panicking into a `96`: a server built with the
/// stub runs, and tells a caller that the operation is not served yet.
fn stub(sig: &syn::Signature) -> Result<String> {
    let mut sig = sig.clone();
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        if let Some(output) = future_output(ty) {
            sig.output = syn::parse_quote! { -> #output };
        }
    }
    sig.asyncness = Some(Default::default());
    // The arguments are used, so the stub builds without warnings under `-D warnings`.
    let arguments: Vec<&syn::Pat> = sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Typed(typed) => Some(&*typed.pat),
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    let tokens = quote! {
        impl Api for KoboApi {
            #sig {
                let _ = (#(#arguments),*);
                Err(ApiError::not_implemented())
            }
        }
    };
    let file: syn::File = syn::parse2(tokens).context("rendering a stub")?;
    let text = prettyplease::unparse(&file).replace("Self::Principal", "Principal");
    // The method alone, one indentation level in, as it sits inside the impl.
    let lines: Vec<&str> = text.lines().collect();
    Ok(lines[1..lines.len() - 1].join("\n"))
}

/// `T` of `impl Future<Output = T> + Send`.
fn future_output(ty: &syn::Type) -> Option<syn::Type> {
    let syn::Type::ImplTrait(implementation) = ty else {
        return None;
    };
    implementation.bounds.iter().find_map(|bound| {
        let syn::TypeParamBound::Trait(bound) = bound else {
            return None;
        };
        let segment = bound.path.segments.last()?;
        let syn::PathArguments::AngleBracketed(arguments) = &segment.arguments else {
            return None;
        };
        arguments.args.iter().find_map(|argument| match argument {
            syn::GenericArgument::AssocType(assoc) if assoc.ident == "Output" => {
                Some(assoc.ty.clone())
            }
            _ => None,
        })
    })
}

/// The methods of `impl Api for ...` in the service's api.rs.
pub fn implemented(service_api: &str) -> Result<BTreeSet<String>> {
    let file = syn::parse_file(service_api).with_context(|| format!("parsing {SERVICE_API}"))?;
    let mut names = BTreeSet::new();
    for item in &file.items {
        let syn::Item::Impl(implementation) = item else {
            continue;
        };
        let Some((path, _)) = &implementation.trait_ else {
            continue;
        };
        if path
            .segments
            .last()
            .is_none_or(|segment| segment.ident != "Api")
        {
            continue;
        }
        for item in &implementation.items {
            if let syn::ImplItem::Fn(method) = item {
                names.insert(method.sig.ident.to_string());
            }
        }
    }
    Ok(names)
}

/// The next steps after generating `generated_api`, or `None` when every operation of it is
/// implemented and none is new. `previous_api` is the generated trait before this run (if
/// there was one), `service_api` the service's api.rs (if it could be read).
pub fn report(
    generated_api: &str,
    previous_api: Option<&str>,
    service_api: Option<&str>,
    operations: &[OperationFacts],
) -> Result<Option<String>> {
    let methods = trait_methods(generated_api)?;
    let before: Option<BTreeSet<String>> = match previous_api {
        // An unreadable previous file (a conflict, a hand edit) tells nothing about what is new.
        Some(text) => trait_methods(text)
            .ok()
            .map(|methods| methods.into_iter().map(|(name, _)| name).collect()),
        None => None,
    };
    let done = service_api.map(implemented).transpose()?;
    let missing: Vec<&(String, String)> = methods
        .iter()
        .filter(|(name, _)| done.as_ref().is_some_and(|done| !done.contains(name)))
        .collect();
    let new: Vec<&str> = methods
        .iter()
        .map(|(name, _)| name.as_str())
        .filter(|name| {
            before
                .as_ref()
                .is_some_and(|before| !before.contains(*name))
        })
        .collect();
    let mut concerned: Vec<&str> = missing.iter().map(|(name, _)| name.as_str()).collect();
    concerned.extend(new.iter().copied());
    concerned.sort_unstable();
    concerned.dedup();
    if concerned.is_empty() {
        return Ok(None);
    }

    let mut text = String::new();
    let _ = writeln!(
        text,
        "\nnext steps for {} (the whole path: {GUIDE}):",
        concerned
            .iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if !missing.is_empty() {
        let _ = writeln!(
            text,
            "\n1. Implement it in `impl Api for KoboApi` ({SERVICE_API}); this compiles as pasted \
             (`cargo build -p kobo` fails until every method is there):\n"
        );
        for (_, stub) in &missing {
            let _ = writeln!(text, "{stub}\n");
        }
        let _ = writeln!(
            text,
            "   Then make it call the domain function through `serve` / `serve_page` / `answer` \
             (ARCHITECTURE.md, \"Adding an operation\")."
        );
    } else {
        let _ = writeln!(text, "\n1. Implemented in {SERVICE_API} already.");
    }
    let _ = writeln!(
        text,
        "\n2. Conformance: add a step to the story in conformance/tests/examples.rs replaying each \
         request example (`every_request_example_of_the_built_operations_is_replayed` fails until \
         you do), then `cargo insta review`:"
    );
    replay_steps(&mut text, &concerned, operations);
    let _ = writeln!(
        text,
        "\n3. Fuzzing: .ci/schemathesis reads the operations from the spec and fuzzes a new one with \
         its token family by default; `.ci/schemathesis --list` shows the plan. If it must not be \
         fuzzed, add it to the script's commented exclusion list with the reason; if it enforces \
         a rule JSON Schema cannot state, list it in .ci/schemathesis.toml."
    );
    let _ = writeln!(
        text,
        "\n4. Behaviour: scenarios in service/tests/ on both stores (`on_both_stores!`), a step in \
         each clients/*/story.* when partners use it, then `.ci/test`."
    );
    Ok(Some(text))
}

/// The conformance story's replay lines for each of `concerned`'s request examples.
fn replay_steps(text: &mut String, concerned: &[&str], operations: &[OperationFacts]) {
    for name in concerned {
        let Some(operation) = operations.iter().find(|operation| operation.id == *name) else {
            continue;
        };
        // The story's tokens: `owner` (a Dashboard login), `api` (the integration token).
        let token = match operation.family.as_deref() {
            None => "None",
            Some(family) if family.starts_with("integration") => "api",
            Some(_) => "owner",
        };
        for example in &operation.request_examples {
            let _ = writeln!(
                text,
                "     story.replay(Operation::{}, \"{example}\", {token}).await.expect(\"00\");",
                operation.variant
            );
        }
        if operation.request_examples.is_empty() {
            let _ = writeln!(
                text,
                "     (`{name}` has no request example yet: add one to the spec first)"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GENERATED: &str = "
        pub trait Api: Send + Sync + 'static {
            type Principal: Clone + Send + Sync + 'static;
            fn authenticate(&self, family: TokenFamily, token: &str)
                -> impl Future<Output = Result<Self::Principal, ApiError>> + Send;
            fn get_profile(&self, ctx: RequestContext<Self::Principal>, body: models::EmptyObject)
                -> impl Future<Output = Result<models::Profile, ApiError>> + Send;
            fn login(&self, ctx: RequestContext<()>, body: models::LoginRequest)
                -> impl Future<Output = Result<models::Session, ApiError>> + Send;
        }";
    const SERVICE: &str = "
        impl Api for KoboApi {
            type Principal = Principal;
            async fn login(&self, ctx: RequestContext<()>, body: models::LoginRequest)
                -> Result<models::Session, ApiError> { Err(ApiError::not_implemented()) }
        }";

    fn facts() -> Vec<OperationFacts> {
        vec![OperationFacts {
            id: "get_profile".into(),
            variant: "GetProfile".into(),
            family: Some("dashboardToken".into()),
            request_examples: vec!["empty".into()],
        }]
    }

    #[test]
    fn the_stub_of_a_missing_method_is_an_async_fn_with_models_paths() {
        let steps = report(GENERATED, Some(GENERATED), Some(SERVICE), &facts())
            .unwrap()
            .expect("get_profile is not implemented");
        assert!(steps.contains("next steps for `get_profile`"), "{steps}");
        assert!(!steps.contains("`login`"), "{steps}");
        assert!(steps.contains(GUIDE));
        assert!(
            steps.contains("    async fn get_profile(")
                && steps.contains("ctx: RequestContext<Principal>,")
                && steps.contains("body: models::EmptyObject,")
                && steps.contains(") -> Result<models::Profile, ApiError> {")
                && steps.contains("let _ = (ctx, body);"),
            "{steps}"
        );
        // A stub answers `09` (not implemented yet, HTTP 501) instead of panicking into `96`.
        assert!(
            steps.contains("        Err(ApiError::not_implemented())\n    }")
                && !steps.contains("todo!"),
            "{steps}"
        );
        assert!(steps.contains(
            "story.replay(Operation::GetProfile, \"empty\", owner).await.expect(\"00\");"
        ));
        // The stub parses as a method of `impl Api for KoboApi`.
        let (_, stub) = trait_methods(GENERATED).unwrap().remove(0);
        syn::parse_str::<syn::ItemImpl>(&format!("impl Api for KoboApi {{ {stub} }}")).unwrap();
    }

    #[test]
    fn nothing_to_say_when_every_method_is_implemented_and_none_is_new() {
        let service = SERVICE.replace(
            "type Principal = Principal;",
            "type Principal = Principal; async fn get_profile(&self) {}",
        );
        assert!(report(GENERATED, Some(GENERATED), Some(&service), &facts())
            .unwrap()
            .is_none());
    }

    #[test]
    fn a_method_new_since_the_previous_trait_is_reported_even_when_implemented() {
        let previous = GENERATED.replace("fn get_profile(", "fn get_profile_old(");
        let service = SERVICE.replace(
            "type Principal = Principal;",
            "type Principal = Principal; async fn get_profile(&self) {}",
        );
        let steps = report(GENERATED, Some(&previous), Some(&service), &facts())
            .unwrap()
            .unwrap();
        assert!(steps.contains("next steps for `get_profile`"));
        assert!(steps.contains("Implemented in"));
    }
}
