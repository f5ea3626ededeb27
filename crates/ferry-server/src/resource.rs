//! Resources: fixed URIs and URI templates, and their read handlers.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use ferry_protocol::common::Annotations;
use ferry_protocol::resources::{
    BlobResourceContents, Resource, ResourceContents, ResourceTemplate, TextResourceContents,
};
use ferry_protocol::result::CacheScope;
use futures::future::BoxFuture;
use serde_json::value::RawValue;

use crate::catalog::Listed;
use crate::completion::{Completer, CompletionFn};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::tool::DefinitionError;
use crate::uri_template::UriTemplate;

/// What a read handler gets: the URI asked for and, for templates, its variables.
#[derive(Debug, Clone)]
pub struct ResourceRequest {
    /// The URI being read.
    pub uri: String,
    /// Template variables (empty for fixed resources).
    pub params: BTreeMap<String, String>,
}

impl ResourceRequest {
    /// A template variable by name.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }
}

/// Converts a read handler's return value into resource contents.
pub trait IntoContents {
    /// The contents.
    fn into_contents(self) -> Vec<ResourceContents>;
}

impl IntoContents for Vec<ResourceContents> {
    fn into_contents(self) -> Vec<ResourceContents> {
        self
    }
}

impl IntoContents for ResourceContents {
    fn into_contents(self) -> Vec<ResourceContents> {
        vec![self]
    }
}

impl IntoContents for TextResourceContents {
    fn into_contents(self) -> Vec<ResourceContents> {
        vec![ResourceContents::Text(self)]
    }
}

impl IntoContents for BlobResourceContents {
    fn into_contents(self) -> Vec<ResourceContents> {
        vec![ResourceContents::Blob(self)]
    }
}

pub(crate) type ReadFuture = BoxFuture<'static, Result<Vec<ResourceContents>>>;

pub(crate) trait ReadHandler: Send + Sync + 'static {
    fn read(&self, ctx: Context, req: ResourceRequest) -> ReadFuture;
}

struct FnRead<F>(F);

impl<F, Fut, R> ReadHandler for FnRead<F>
where
    F: Fn(Context, ResourceRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R>> + Send + 'static,
    R: IntoContents,
{
    fn read(&self, ctx: Context, req: ResourceRequest) -> ReadFuture {
        let fut = (self.0)(ctx, req);
        Box::pin(async move { fut.await.map(IntoContents::into_contents) })
    }
}

struct Fixed(Vec<ResourceContents>);

impl ReadHandler for Fixed {
    fn read(&self, _ctx: Context, _req: ResourceRequest) -> ReadFuture {
        let c = self.0.clone();
        Box::pin(std::future::ready(Ok(c)))
    }
}

/// Caching hints for a read result (`ttlMs`, `cacheScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheHint {
    /// Milliseconds the result stays fresh.
    pub ttl_ms: u64,
    /// Who may share the cached result.
    pub scope: CacheScope,
}

impl CacheHint {
    /// A hint.
    pub fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        CacheHint { ttl_ms, scope }
    }
}

/// Builds a fixed resource. Start with [`resource`].
#[must_use = "a resource builder does nothing until registered"]
pub struct ResourceBuilder {
    def: Resource,
    handler: Option<Arc<dyn ReadHandler>>,
    cache: Option<CacheHint>,
    scopes: Vec<String>,
}

/// Starts a resource at `uri` named `name`.
///
/// ```
/// use ferry_server::resource;
///
/// let readme = resource("file:///README.md", "README")
///     .mime_type("text/markdown")
///     .text("# Hello");
/// ```
pub fn resource(uri: impl Into<String>, name: impl Into<String>) -> ResourceBuilder {
    ResourceBuilder {
        def: Resource::new(uri, name),
        handler: None,
        cache: None,
        scopes: Vec::new(),
    }
}

impl ResourceBuilder {
    /// A human-readable name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.def.title = Some(title.into());
        self
    }

    /// What the resource holds.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.def.description = Some(description.into());
        self
    }

    /// Its MIME type.
    pub fn mime_type(mut self, mime: impl Into<String>) -> Self {
        self.def.mime_type = Some(mime.into());
        self
    }

    /// Its size in bytes, if known.
    pub fn size(mut self, size: u64) -> Self {
        self.def.size = Some(size);
        self
    }

    /// Audience, priority and last-modified hints.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.def.annotations = Some(annotations);
        self
    }

    /// Caching hints for reads (default: the server's resource default).
    pub fn cache(mut self, hint: CacheHint) -> Self {
        self.cache = Some(hint);
        self
    }

    /// Scopes a principal needs to use it: a request without them is refused (HTTP
    /// 403 with a `WWW-Authenticate` challenge naming them, behind an authorization
    /// layer). A granted scope covers the scopes below it (`files` covers
    /// `files:delete`).
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Serves fixed text.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        let mut c = TextResourceContents::new(self.def.uri.clone(), text);
        c.mime_type = self.def.mime_type.clone();
        self.handler = Some(Arc::new(Fixed(vec![ResourceContents::Text(c)])));
        self
    }

    /// Serves fixed binary data (base64-encoded on the wire).
    pub fn blob(mut self, data: &[u8]) -> Self {
        let mut c = BlobResourceContents::from_bytes(self.def.uri.clone(), data);
        c.mime_type = self.def.mime_type.clone();
        self.handler = Some(Arc::new(Fixed(vec![ResourceContents::Blob(c)])));
        self
    }

    /// Serves contents computed on each read.
    pub fn handler<F, Fut, R>(mut self, f: F) -> Self
    where
        F: Fn(Context, ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R>> + Send + 'static,
        R: IntoContents,
    {
        self.handler = Some(Arc::new(FnRead(f)));
        self
    }

    pub(crate) fn build(self) -> std::result::Result<ResourceEntry, DefinitionError> {
        let uri = self.def.uri.clone();
        if uri.is_empty() || !uri.contains(':') {
            return Err(DefinitionError::new(
                "resource",
                &uri,
                "uri must be an absolute URI",
            ));
        }
        let handler = self
            .handler
            .ok_or_else(|| DefinitionError::new("resource", &uri, "no contents or handler"))?;
        let json = serde_json::value::to_raw_value(&self.def)
            .map_err(|e| DefinitionError::new("resource", &uri, e.to_string()))?;
        Ok(ResourceEntry {
            def: self.def,
            json,
            handler,
            cache: self.cache,
            scopes: self.scopes.into(),
        })
    }
}

pub(crate) struct ResourceEntry {
    pub(crate) def: Resource,
    json: Box<RawValue>,
    pub(crate) handler: Arc<dyn ReadHandler>,
    pub(crate) cache: Option<CacheHint>,
    pub(crate) scopes: Arc<[String]>,
}

impl Listed for ResourceEntry {
    fn key(&self) -> &str {
        &self.def.uri
    }
    fn definition(&self) -> &RawValue {
        &self.json
    }
}

/// Builds a resource template. Start with [`resource_template`].
#[must_use = "a template builder does nothing until registered"]
pub struct TemplateBuilder {
    def: ResourceTemplate,
    handler: Option<Arc<dyn ReadHandler>>,
    completers: BTreeMap<String, Arc<dyn Completer>>,
    cache: Option<CacheHint>,
    scopes: Vec<String>,
}

/// Starts a resource template (RFC 6570) named `name`.
///
/// ```
/// use ferry_server::{resource_template, Context, ResourceRequest, Result};
/// use ferry_protocol::resources::TextResourceContents;
///
/// let users = resource_template("users://{id}/profile", "User profile")
///     .handler(|_ctx: Context, req: ResourceRequest| async move {
///         let id = req.param("id").unwrap_or_default().to_owned();
///         Ok(TextResourceContents::new(req.uri, format!("profile of {id}")))
///     });
/// ```
pub fn resource_template(
    uri_template: impl Into<String>,
    name: impl Into<String>,
) -> TemplateBuilder {
    TemplateBuilder {
        def: ResourceTemplate::new(uri_template, name),
        handler: None,
        completers: BTreeMap::new(),
        cache: None,
        scopes: Vec::new(),
    }
}

impl TemplateBuilder {
    /// A human-readable name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.def.title = Some(title.into());
        self
    }

    /// What the resources hold.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.def.description = Some(description.into());
        self
    }

    /// Their MIME type.
    pub fn mime_type(mut self, mime: impl Into<String>) -> Self {
        self.def.mime_type = Some(mime.into());
        self
    }

    /// Caching hints for reads.
    pub fn cache(mut self, hint: CacheHint) -> Self {
        self.cache = Some(hint);
        self
    }

    /// Scopes a principal needs to use it: a request without them is refused (HTTP
    /// 403 with a `WWW-Authenticate` challenge naming them, behind an authorization
    /// layer). A granted scope covers the scopes below it (`files` covers
    /// `files:delete`).
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Offers completions for the template variable `var` (`completion/complete`).
    pub fn complete<F, Fut>(mut self, var: impl Into<String>, f: F) -> Self
    where
        F: Fn(Context, crate::completion::CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<String>>> + Send + 'static,
    {
        self.completers
            .insert(var.into(), Arc::new(CompletionFn(f)));
        self
    }

    /// Reads a resource matching the template. Return `Err(not_found(&req.uri))` when none
    /// exists.
    pub fn handler<F, Fut, R>(mut self, f: F) -> Self
    where
        F: Fn(Context, ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R>> + Send + 'static,
        R: IntoContents,
    {
        self.handler = Some(Arc::new(FnRead(f)));
        self
    }

    pub(crate) fn build(self) -> std::result::Result<TemplateEntry, DefinitionError> {
        let t = self.def.uri_template.clone();
        let template = UriTemplate::parse(&t)
            .map_err(|e| DefinitionError::new("resource template", &t, e.to_string()))?;
        let handler = self
            .handler
            .ok_or_else(|| DefinitionError::new("resource template", &t, "no handler"))?;
        let json = serde_json::value::to_raw_value(&self.def)
            .map_err(|e| DefinitionError::new("resource template", &t, e.to_string()))?;
        Ok(TemplateEntry {
            def: self.def,
            template,
            json,
            handler,
            completers: self.completers,
            cache: self.cache,
            scopes: self.scopes.into(),
        })
    }
}

pub(crate) struct TemplateEntry {
    pub(crate) def: ResourceTemplate,
    pub(crate) template: UriTemplate,
    json: Box<RawValue>,
    pub(crate) handler: Arc<dyn ReadHandler>,
    pub(crate) completers: BTreeMap<String, Arc<dyn Completer>>,
    pub(crate) cache: Option<CacheHint>,
    pub(crate) scopes: Arc<[String]>,
}

impl Listed for TemplateEntry {
    fn key(&self) -> &str {
        &self.def.uri_template
    }
    fn definition(&self) -> &RawValue {
        &self.json
    }
}

/// The error for a resource that does not exist: -32602 with the URI in `data`
/// (2026-07-28 resources.mdx; never empty contents).
pub fn not_found(uri: &str) -> Error {
    Error::resource_not_found(uri)
}
