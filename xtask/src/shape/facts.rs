//! What the tidy rules read of one Rust file, parsed with `syn`: its functions, the paths it
//! names and its string literals, from the code that is not test-only, and the modules it
//! declares.
//!
//! Test-only code is told by its attributes, wherever it is: an item, an `impl` or trait
//! member, a statement, a match arm, a field under `#[cfg(test)]` (or `cfg(all(test, ..))`,
//! or `cfg(any(..))` of test-only predicates) or marked `#[test]`, `#[tokio::test]` (any
//! attribute whose last segment is `test`), and a whole file under `#![cfg(test)]`. Code after
//! a test-only item is read like any other.
//!
//! Paths are read wherever they are written: `use` trees (each leaf), expressions, types,
//! patterns, attributes, and the tokens of macro calls and `macro_rules!` bodies (a path there
//! is a run of identifiers joined by `::`; `$crate::` and `$name::` are left out). A path that
//! starts with `self`, `super`, a module declared beside it or a name its module imported is
//! resolved to the path from its crate's root, starting with `crate`.

use std::collections::BTreeMap;

use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit::Visit;

/// A function and its length in lines, from its signature to its closing brace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub line: usize,
    pub lines: usize,
}

/// A path the code names, with the line it starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    pub path: Vec<String>,
    pub line: usize,
}

impl Named {
    /// Whether `segments` appear one after the other in the path (`["Claim", "Replay"]`).
    pub fn contains(&self, segments: &[&str]) -> bool {
        self.path
            .windows(segments.len())
            .any(|window| window.iter().zip(segments).all(|(a, b)| a == b))
    }

    pub fn starts_with(&self, first: &str) -> bool {
        self.path.first().is_some_and(|segment| segment == first)
    }
}

/// A `mod name;` declaration: the file it names is test-only when the declaration is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declared {
    /// The inline modules around the declaration, then its name (`["a", "b"]` for
    /// `mod a { mod b; }`).
    pub module: Vec<String>,
    /// Its `#[path = ".."]`, when it has one.
    pub path: Option<String>,
    pub test_only: bool,
}

/// What a file's code (tests left out) is made of.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// The file is test-only as a whole (`#![cfg(test)]`).
    pub test_only: bool,
    pub functions: Vec<Function>,
    pub paths: Vec<Named>,
    /// String literals, with their line.
    pub strings: Vec<(usize, String)>,
    pub declared: Vec<Declared>,
}

/// Reads the facts of `file`, whose module is `module` in its crate (`["money", "fees"]`;
/// empty for a crate's root).
pub fn read(file: &syn::File, module: &[String]) -> Facts {
    let mut collector = Collector {
        module: module.to_vec(),
        scopes: Vec::new(),
        in_definition: false,
        facts: Facts::default(),
    };
    declarations(
        &file.items,
        &mut Vec::new(),
        false,
        &mut collector.facts.declared,
    );
    if test_only(&file.attrs) {
        collector.facts.test_only = true;
        return collector.facts;
    }
    collector.facts.test_only = false;
    collector.enter(&file.items);
    for attribute in &file.attrs {
        collector.visit_attribute(attribute);
    }
    for item in &file.items {
        collector.visit_item(item);
    }
    collector.scopes.pop();
    collector.facts
}

/// Whether attributes make what they are on exist only in tests: `#[cfg(P)]` with a
/// test-only `P`, or a test attribute (`#[test]`, `#[tokio::test]`, `#[sqlx::test]`).
pub fn test_only(attributes: &[syn::Attribute]) -> bool {
    attributes.iter().any(|attribute| {
        let path = attribute.path();
        if path.segments.last().is_some_and(|s| s.ident == "test") {
            return true;
        }
        path.is_ident("cfg")
            && attribute
                .parse_args::<syn::Meta>()
                .is_ok_and(|predicate| only_under_test(&predicate))
    })
}

/// Whether a `cfg` predicate can hold only when compiling tests.
fn only_under_test(predicate: &syn::Meta) -> bool {
    match predicate {
        syn::Meta::Path(path) => path.is_ident("test"),
        syn::Meta::List(list) => {
            let Ok(inner) = Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated
                .parse2(list.tokens.clone())
            else {
                return false;
            };
            if list.path.is_ident("all") {
                inner.iter().any(only_under_test)
            } else if list.path.is_ident("any") {
                !inner.is_empty() && inner.iter().all(only_under_test)
            } else {
                false
            }
        }
        syn::Meta::NameValue(_) => false,
    }
}

/// Every `mod name;` in `items`, inline modules followed (their declarations are test-only
/// when the inline module is).
fn declarations(
    items: &[syn::Item],
    parents: &mut Vec<String>,
    under_test: bool,
    found: &mut Vec<Declared>,
) {
    for item in items {
        let syn::Item::Mod(module) = item else {
            continue;
        };
        let test = under_test || test_only(&module.attrs);
        parents.push(module.ident.unraw());
        match &module.content {
            Some((_, items)) => declarations(items, parents, test, found),
            None => found.push(Declared {
                module: parents.clone(),
                path: path_attribute(&module.attrs),
                test_only: test,
            }),
        }
        parents.pop();
    }
}

fn path_attribute(attributes: &[syn::Attribute]) -> Option<String> {
    attributes
        .iter()
        .find_map(|attribute| match &attribute.meta {
            syn::Meta::NameValue(value) if value.path.is_ident("path") => match &value.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(path),
                    ..
                }) => Some(path.value()),
                _ => None,
            },
            _ => None,
        })
}

trait Unraw {
    fn unraw(&self) -> String;
}

impl Unraw for proc_macro2::Ident {
    fn unraw(&self) -> String {
        let text = self.to_string();
        text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
    }
}

/// What a module scope knows to resolve paths: the modules declared in it and the names it
/// imported (each with the path it stands for).
#[derive(Default)]
struct Scope {
    children: Vec<String>,
    imported: BTreeMap<String, Vec<String>>,
}

struct Collector {
    /// The module being read: the file's, then each inline module entered.
    module: Vec<String>,
    scopes: Vec<Scope>,
    /// Reading the body of a `macro_rules!`.
    in_definition: bool,
    facts: Facts,
}

impl Collector {
    /// Opens the scope of a module whose items are `items`: its child modules and imports.
    fn enter(&mut self, items: &[syn::Item]) {
        let mut scope = Scope::default();
        for item in items {
            match item {
                syn::Item::Mod(module) => scope.children.push(module.ident.unraw()),
                syn::Item::Use(used) if !test_only(&used.attrs) => {
                    let mut leaves = Vec::new();
                    use_leaves(&used.tree, Vec::new(), &mut leaves);
                    for (path, name, _) in leaves {
                        if let Some(name) = name {
                            scope.imported.insert(name, path);
                        }
                    }
                }
                _ => {}
            }
        }
        // Imports are resolved against the scope's own modules: fix them up once it is open.
        self.scopes.push(Scope {
            children: scope.children,
            imported: BTreeMap::new(),
        });
        let imported = scope
            .imported
            .into_iter()
            .map(|(name, path)| {
                let resolved = self.resolve(path, false);
                (name, resolved)
            })
            .collect();
        self.scopes.last_mut().expect("just pushed").imported = imported;
    }

    /// The path from the crate's root that `segments` stand for, when they start with
    /// `self`, `super`, or (two segments or more) a module of this scope or, when
    /// `through_imports`, an imported name; else `segments` as written. A lone name is left
    /// alone: it may be a variable.
    fn resolve(&self, segments: Vec<String>, through_imports: bool) -> Vec<String> {
        let Some(first) = segments.first() else {
            return segments;
        };
        let from_module = |depth: usize, rest: &[String]| {
            let mut path = vec!["crate".to_owned()];
            path.extend(self.module[..depth].iter().cloned());
            path.extend(rest.iter().cloned());
            path
        };
        match first.as_str() {
            "crate" => segments,
            "self" => from_module(self.module.len(), &segments[1..]),
            "super" => {
                let ups = segments.iter().take_while(|s| *s == "super").count();
                let depth = self.module.len().saturating_sub(ups);
                from_module(depth, &segments[ups..])
            }
            _ if segments.len() < 2 => segments,
            _ => {
                let Some(scope) = self.scopes.last() else {
                    return segments;
                };
                if scope.children.contains(first) {
                    return from_module(self.module.len(), &segments);
                }
                if through_imports {
                    let imported = self
                        .scopes
                        .iter()
                        .rev()
                        .find_map(|scope| scope.imported.get(first));
                    if let Some(imported) = imported {
                        let mut path = imported.clone();
                        path.extend(segments[1..].iter().cloned());
                        return path;
                    }
                }
                segments
            }
        }
    }

    fn name(&mut self, segments: Vec<String>, line: usize) {
        if segments.is_empty() {
            return;
        }
        let path = self.resolve(segments, true);
        self.facts.paths.push(Named { path, line });
    }

    fn function(&mut self, name: &syn::Ident, start: proc_macro2::Span, end: proc_macro2::Span) {
        let (start, end) = (start.start().line, end.end().line);
        self.facts.functions.push(Function {
            name: name.unraw(),
            line: start,
            lines: end + 1 - start,
        });
    }

    /// Paths and string literals in tokens no parser read: a macro's input, an attribute's.
    fn tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut at = 0;
        while at < tokens.len() {
            match &tokens[at] {
                TokenTree::Group(group) => self.tokens(group.stream()),
                TokenTree::Literal(literal) => {
                    if let syn::Lit::Str(text) = syn::Lit::new(literal.clone()) {
                        let line = literal.span().start().line;
                        self.facts.strings.push((line, text.value()));
                    }
                }
                TokenTree::Ident(first) => {
                    let after_dollar = at > 0 && is_punct(&tokens[at - 1], '$');
                    let line = first.span().start().line;
                    let mut segments = vec![first.unraw()];
                    while let (Some(colon), Some(_), Some(TokenTree::Ident(next))) =
                        (tokens.get(at + 1), tokens.get(at + 2), tokens.get(at + 3))
                    {
                        let joined = matches!(colon, TokenTree::Punct(p) if p.as_char() == ':' && p.spacing() == Spacing::Joint)
                            && is_punct(&tokens[at + 2], ':');
                        if !joined {
                            break;
                        }
                        segments.push(next.unraw());
                        at += 3;
                    }
                    // `a::$b` is no path; neither are `$crate::a`, `$name::a`.
                    let before_dollar = tokens.get(at + 1).is_some_and(|t| is_punct(t, ':'))
                        && tokens.get(at + 3).is_some_and(|t| is_punct(t, '$'));
                    let relative = segments[0] == "self" || segments[0] == "super";
                    let skipped = after_dollar || before_dollar || (self.in_definition && relative);
                    if !skipped {
                        self.name(segments, line);
                    }
                }
                TokenTree::Punct(_) => {}
            }
            at += 1;
        }
    }
}

fn is_punct(token: &TokenTree, c: char) -> bool {
    matches!(token, TokenTree::Punct(p) if p.as_char() == c)
}

/// The leaves of a `use` tree: each path, the name it binds (none for a glob or `_`), and the
/// line it starts on.
fn use_leaves(
    tree: &syn::UseTree,
    prefix: Vec<String>,
    leaves: &mut Vec<(Vec<String>, Option<String>, usize)>,
) {
    let line = tree.span().start().line;
    match tree {
        syn::UseTree::Path(path) => {
            let mut prefix = prefix;
            prefix.push(path.ident.unraw());
            use_leaves(&path.tree, prefix, leaves);
        }
        syn::UseTree::Name(name) => {
            let name = name.ident.unraw();
            let mut path = prefix;
            if name != "self" {
                path.push(name);
            }
            let bound = path.last().cloned();
            leaves.push((path, bound, line));
        }
        syn::UseTree::Rename(rename) => {
            let mut path = prefix;
            if rename.ident != "self" {
                path.push(rename.ident.unraw());
            }
            let bound = Some(rename.rename.unraw()).filter(|name| name != "_");
            leaves.push((path, bound, line));
        }
        syn::UseTree::Glob(_) => leaves.push((prefix, None, line)),
        syn::UseTree::Group(group) => {
            for tree in &group.items {
                use_leaves(tree, prefix.clone(), leaves);
            }
        }
    }
}

fn item_attributes(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item;
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

fn expression_attributes(expression: &syn::Expr) -> &[syn::Attribute] {
    use syn::Expr;
    match expression {
        Expr::Array(e) => &e.attrs,
        Expr::Assign(e) => &e.attrs,
        Expr::Async(e) => &e.attrs,
        Expr::Await(e) => &e.attrs,
        Expr::Binary(e) => &e.attrs,
        Expr::Block(e) => &e.attrs,
        Expr::Break(e) => &e.attrs,
        Expr::Call(e) => &e.attrs,
        Expr::Cast(e) => &e.attrs,
        Expr::Closure(e) => &e.attrs,
        Expr::Const(e) => &e.attrs,
        Expr::Continue(e) => &e.attrs,
        Expr::Field(e) => &e.attrs,
        Expr::ForLoop(e) => &e.attrs,
        Expr::Group(e) => &e.attrs,
        Expr::If(e) => &e.attrs,
        Expr::Index(e) => &e.attrs,
        Expr::Infer(e) => &e.attrs,
        Expr::Let(e) => &e.attrs,
        Expr::Lit(e) => &e.attrs,
        Expr::Loop(e) => &e.attrs,
        Expr::Macro(e) => &e.attrs,
        Expr::Match(e) => &e.attrs,
        Expr::MethodCall(e) => &e.attrs,
        Expr::Paren(e) => &e.attrs,
        Expr::Path(e) => &e.attrs,
        Expr::Range(e) => &e.attrs,
        Expr::RawAddr(e) => &e.attrs,
        Expr::Reference(e) => &e.attrs,
        Expr::Repeat(e) => &e.attrs,
        Expr::Return(e) => &e.attrs,
        Expr::Struct(e) => &e.attrs,
        Expr::Try(e) => &e.attrs,
        Expr::TryBlock(e) => &e.attrs,
        Expr::Tuple(e) => &e.attrs,
        Expr::Unary(e) => &e.attrs,
        Expr::Unsafe(e) => &e.attrs,
        Expr::While(e) => &e.attrs,
        Expr::Yield(e) => &e.attrs,
        _ => &[],
    }
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !test_only(item_attributes(item)) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, module: &'ast syn::ItemMod) {
        for attribute in &module.attrs {
            self.visit_attribute(attribute);
        }
        let Some((_, items)) = &module.content else {
            return;
        };
        self.module.push(module.ident.unraw());
        self.enter(items);
        for item in items {
            self.visit_item(item);
        }
        self.scopes.pop();
        self.module.pop();
    }

    fn visit_item_use(&mut self, used: &'ast syn::ItemUse) {
        let mut leaves = Vec::new();
        use_leaves(&used.tree, Vec::new(), &mut leaves);
        for (path, name, line) in leaves {
            let resolved = self.resolve(path, false);
            if let (Some(name), Some(scope)) = (name, self.scopes.last_mut()) {
                scope
                    .imported
                    .entry(name)
                    .or_insert_with(|| resolved.clone());
            }
            self.facts.paths.push(Named {
                path: resolved,
                line,
            });
        }
    }

    fn visit_item_fn(&mut self, function: &'ast syn::ItemFn) {
        self.function(
            &function.sig.ident,
            start(&function.vis, &function.sig),
            function.block.span(),
        );
        syn::visit::visit_item_fn(self, function);
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attributes = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            syn::ImplItem::Macro(i) => &i.attrs,
            _ => &Vec::new(),
        };
        if !test_only(attributes) {
            syn::visit::visit_impl_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, function: &'ast syn::ImplItemFn) {
        self.function(
            &function.sig.ident,
            start(&function.vis, &function.sig),
            function.block.span(),
        );
        syn::visit::visit_impl_item_fn(self, function);
    }

    fn visit_trait_item(&mut self, item: &'ast syn::TraitItem) {
        let attributes = match item {
            syn::TraitItem::Const(i) => &i.attrs,
            syn::TraitItem::Fn(i) => &i.attrs,
            syn::TraitItem::Type(i) => &i.attrs,
            syn::TraitItem::Macro(i) => &i.attrs,
            _ => &Vec::new(),
        };
        if !test_only(attributes) {
            syn::visit::visit_trait_item(self, item);
        }
    }

    fn visit_trait_item_fn(&mut self, function: &'ast syn::TraitItemFn) {
        if let Some(body) = &function.default {
            self.function(&function.sig.ident, function.sig.span(), body.span());
        }
        syn::visit::visit_trait_item_fn(self, function);
    }

    fn visit_foreign_item(&mut self, item: &'ast syn::ForeignItem) {
        let attributes = match item {
            syn::ForeignItem::Fn(i) => &i.attrs,
            syn::ForeignItem::Static(i) => &i.attrs,
            syn::ForeignItem::Type(i) => &i.attrs,
            syn::ForeignItem::Macro(i) => &i.attrs,
            _ => &Vec::new(),
        };
        if !test_only(attributes) {
            syn::visit::visit_foreign_item(self, item);
        }
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        if !test_only(&local.attrs) {
            syn::visit::visit_local(self, local);
        }
    }

    fn visit_stmt_macro(&mut self, statement: &'ast syn::StmtMacro) {
        if !test_only(&statement.attrs) {
            syn::visit::visit_stmt_macro(self, statement);
        }
    }

    fn visit_expr(&mut self, expression: &'ast syn::Expr) {
        if !test_only(expression_attributes(expression)) {
            syn::visit::visit_expr(self, expression);
        }
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        if !test_only(&arm.attrs) {
            syn::visit::visit_arm(self, arm);
        }
    }

    fn visit_field(&mut self, field: &'ast syn::Field) {
        if !test_only(&field.attrs) {
            syn::visit::visit_field(self, field);
        }
    }

    fn visit_field_value(&mut self, field: &'ast syn::FieldValue) {
        if !test_only(&field.attrs) {
            syn::visit::visit_field_value(self, field);
        }
    }

    fn visit_variant(&mut self, variant: &'ast syn::Variant) {
        if !test_only(&variant.attrs) {
            syn::visit::visit_variant(self, variant);
        }
    }

    fn visit_attribute(&mut self, attribute: &'ast syn::Attribute) {
        // A doc comment is prose: its paths and words are no code.
        // A `cfg` predicate names features and targets, not code.
        if attribute.path().is_ident("doc") || attribute.path().is_ident("cfg") {
            return;
        }
        syn::visit::visit_attribute(self, attribute);
    }

    fn visit_meta_list(&mut self, list: &'ast syn::MetaList) {
        self.visit_path(&list.path);
        self.tokens(list.tokens.clone());
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.tokens(mac.tokens.clone());
    }

    fn visit_vis_restricted(&mut self, _: &'ast syn::VisRestricted) {
        // `pub(crate)`, `pub(super)`: a visibility, not a use.
    }

    fn visit_item_macro(&mut self, item: &'ast syn::ItemMacro) {
        for attribute in &item.attrs {
            self.visit_attribute(attribute);
        }
        self.visit_path(&item.mac.path);
        // A `macro_rules!` body's relative paths resolve where it is called: left out.
        let defines = item.ident.is_some();
        self.in_definition = defines;
        self.tokens(item.mac.tokens.clone());
        self.in_definition = false;
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.unraw()).collect();
        let line = path.span().start().line;
        self.name(segments, line);
        syn::visit::visit_path(self, path);
    }

    fn visit_lit_str(&mut self, literal: &'ast syn::LitStr) {
        let line = literal.span().start().line;
        self.facts.strings.push((line, literal.value()));
    }
}

/// Where a function starts: its visibility when it has one, else its signature.
fn start(visibility: &syn::Visibility, signature: &syn::Signature) -> proc_macro2::Span {
    match visibility {
        syn::Visibility::Inherited => signature.span(),
        _ => visibility.span(),
    }
}
