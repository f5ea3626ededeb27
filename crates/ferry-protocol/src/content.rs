//! Content blocks: what tools, prompts and sampling messages carry (server/tools.mdx, client/sampling.mdx).
//!
//! Each block type writes its own `"type"` member, so a block serializes the same whether
//! it stands alone or sits inside a [`ContentBlock`]. The enums read `"type"` to pick the
//! variant; the block structs themselves do not check it.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::common::{Annotations, JsonObject};
use crate::meta::Meta;
use crate::resources::{Resource, ResourceContents};

/// Text for or from a model (`"type": "text"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "text", rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TextContent {
    /// A text block.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent {
            text: text.into(),
            ..Default::default()
        }
    }
}

/// An image (`"type": "image"`), Base64-encoded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "image", rename_all = "camelCase")]
pub struct ImageContent {
    /// The Base64-encoded image.
    pub data: String,
    /// Its MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ImageContent {
    /// An image from already Base64-encoded data.
    pub fn new(data_base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ImageContent {
            data: data_base64.into(),
            mime_type: mime_type.into(),
            ..Default::default()
        }
    }

    /// An image from raw bytes, which are Base64-encoded here.
    pub fn from_bytes(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        ImageContent::new(STANDARD.encode(bytes), mime_type)
    }
}

/// Audio (`"type": "audio"`), Base64-encoded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "audio", rename_all = "camelCase")]
pub struct AudioContent {
    /// The Base64-encoded audio.
    pub data: String,
    /// Its MIME type, e.g. `audio/wav`.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl AudioContent {
    /// Audio from already Base64-encoded data.
    pub fn new(data_base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        AudioContent {
            data: data_base64.into(),
            mime_type: mime_type.into(),
            ..Default::default()
        }
    }

    /// Audio from raw bytes, which are Base64-encoded here.
    pub fn from_bytes(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        AudioContent::new(STANDARD.encode(bytes), mime_type)
    }
}

/// A link to a resource the server can read (`"type": "resource_link"`): a [`Resource`]
/// with a type tag. Links returned by tools need not appear in `resources/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "resource_link")]
pub struct ResourceLink {
    /// The linked resource.
    #[serde(flatten)]
    pub resource: Resource,
}

impl ResourceLink {
    /// A link to `resource`.
    pub fn new(resource: Resource) -> Self {
        ResourceLink { resource }
    }
}

impl From<Resource> for ResourceLink {
    fn from(resource: Resource) -> Self {
        ResourceLink { resource }
    }
}

/// A resource's contents embedded in a prompt or tool result (`"type": "resource"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "resource", rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The contents: text or a blob.
    pub resource: ResourceContents,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl EmbeddedResource {
    /// Embeds `contents`.
    pub fn new(contents: impl Into<ResourceContents>) -> Self {
        EmbeddedResource {
            resource: contents.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// A model's request to call a tool, in sampling (`"type": "tool_use"`). Deprecated with
/// sampling in 2026-07-28.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "tool_use", rename_all = "camelCase")]
pub struct ToolUseContent {
    /// Unique id, matched by the [`ToolResultContent::tool_use_id`] that answers it.
    pub id: String,
    /// The tool to call.
    pub name: String,
    /// The arguments.
    pub input: JsonObject,
    /// Metadata; clients should keep it when sending the block back.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ToolUseContent {
    /// A tool use.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: JsonObject) -> Self {
        ToolUseContent {
            id: id.into(),
            name: name.into(),
            input,
            meta: None,
        }
    }
}

/// The result of a tool use, given back to the model in sampling (`"type": "tool_result"`).
/// Deprecated with sampling in 2026-07-28.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "tool_result", rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The [`ToolUseContent::id`] this answers.
    pub tool_use_id: String,
    /// Unstructured result, as in a `CallToolResult`.
    pub content: Vec<ContentBlock>,
    /// Structured result: any JSON value, `null` included.
    #[serde(
        default,
        deserialize_with = "crate::serde_util::any_value",
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_content: Option<Value>,
    /// Whether the tool use failed. Absent means false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata; clients should keep it when sending the block back.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ToolResultContent {
    /// A tool result with content.
    pub fn new(tool_use_id: impl Into<String>, content: Vec<ContentBlock>) -> Self {
        ToolResultContent {
            tool_use_id: tool_use_id.into(),
            content,
            ..Default::default()
        }
    }
}

/// One block of content in a tool result or prompt message (schema.ts `ContentBlock`),
/// told apart by `"type"`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ContentBlock {
    /// `"text"`.
    Text(TextContent),
    /// `"image"`.
    Image(ImageContent),
    /// `"audio"`.
    Audio(AudioContent),
    /// `"resource_link"`.
    ResourceLink(ResourceLink),
    /// `"resource"`.
    EmbeddedResource(EmbeddedResource),
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum ContentBlockRepr {
    #[serde(rename = "text")]
    Text(TextContent),
    #[serde(rename = "image")]
    Image(ImageContent),
    #[serde(rename = "audio")]
    Audio(AudioContent),
    #[serde(rename = "resource_link")]
    ResourceLink(ResourceLink),
    #[serde(rename = "resource")]
    EmbeddedResource(EmbeddedResource),
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match ContentBlockRepr::deserialize(d)? {
            ContentBlockRepr::Text(c) => ContentBlock::Text(c),
            ContentBlockRepr::Image(c) => ContentBlock::Image(c),
            ContentBlockRepr::Audio(c) => ContentBlock::Audio(c),
            ContentBlockRepr::ResourceLink(c) => ContentBlock::ResourceLink(c),
            ContentBlockRepr::EmbeddedResource(c) => ContentBlock::EmbeddedResource(c),
        })
    }
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }

    /// An image block from already Base64-encoded data.
    pub fn image(data_base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(ImageContent::new(data_base64, mime_type))
    }

    /// An image block from raw bytes.
    pub fn image_bytes(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(ImageContent::from_bytes(bytes, mime_type))
    }

    /// An audio block from already Base64-encoded data.
    pub fn audio(data_base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(AudioContent::new(data_base64, mime_type))
    }

    /// An audio block from raw bytes.
    pub fn audio_bytes(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(AudioContent::from_bytes(bytes, mime_type))
    }

    /// A link to a resource.
    pub fn resource_link(resource: Resource) -> Self {
        ContentBlock::ResourceLink(ResourceLink::new(resource))
    }

    /// Embedded resource contents.
    pub fn embedded(contents: impl Into<ResourceContents>) -> Self {
        ContentBlock::EmbeddedResource(EmbeddedResource::new(contents))
    }

    /// The `"type"` tag of this block.
    pub fn type_name(&self) -> &'static str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::Audio(_) => "audio",
            ContentBlock::ResourceLink(_) => "resource_link",
            ContentBlock::EmbeddedResource(_) => "resource",
        }
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// Sets the block's annotations.
    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        let slot = match &mut self {
            ContentBlock::Text(c) => &mut c.annotations,
            ContentBlock::Image(c) => &mut c.annotations,
            ContentBlock::Audio(c) => &mut c.annotations,
            ContentBlock::ResourceLink(c) => &mut c.resource.annotations,
            ContentBlock::EmbeddedResource(c) => &mut c.annotations,
        };
        *slot = Some(annotations);
        self
    }
}

impl From<TextContent> for ContentBlock {
    fn from(c: TextContent) -> Self {
        ContentBlock::Text(c)
    }
}

impl From<ImageContent> for ContentBlock {
    fn from(c: ImageContent) -> Self {
        ContentBlock::Image(c)
    }
}

impl From<AudioContent> for ContentBlock {
    fn from(c: AudioContent) -> Self {
        ContentBlock::Audio(c)
    }
}

impl From<ResourceLink> for ContentBlock {
    fn from(c: ResourceLink) -> Self {
        ContentBlock::ResourceLink(c)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(c: EmbeddedResource) -> Self {
        ContentBlock::EmbeddedResource(c)
    }
}

impl From<&str> for ContentBlock {
    fn from(text: &str) -> Self {
        ContentBlock::text(text)
    }
}

impl From<String> for ContentBlock {
    fn from(text: String) -> Self {
        ContentBlock::text(text)
    }
}

/// One block of a sampling message (schema.ts `SamplingMessageContentBlock`), told apart by
/// `"type"`. Deprecated with sampling in 2026-07-28.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SamplingMessageContentBlock {
    /// `"text"`.
    Text(TextContent),
    /// `"image"`.
    Image(ImageContent),
    /// `"audio"`.
    Audio(AudioContent),
    /// `"tool_use"`.
    ToolUse(ToolUseContent),
    /// `"tool_result"`.
    ToolResult(ToolResultContent),
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum SamplingBlockRepr {
    #[serde(rename = "text")]
    Text(TextContent),
    #[serde(rename = "image")]
    Image(ImageContent),
    #[serde(rename = "audio")]
    Audio(AudioContent),
    #[serde(rename = "tool_use")]
    ToolUse(ToolUseContent),
    #[serde(rename = "tool_result")]
    ToolResult(ToolResultContent),
}

impl<'de> Deserialize<'de> for SamplingMessageContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match SamplingBlockRepr::deserialize(d)? {
            SamplingBlockRepr::Text(c) => SamplingMessageContentBlock::Text(c),
            SamplingBlockRepr::Image(c) => SamplingMessageContentBlock::Image(c),
            SamplingBlockRepr::Audio(c) => SamplingMessageContentBlock::Audio(c),
            SamplingBlockRepr::ToolUse(c) => SamplingMessageContentBlock::ToolUse(c),
            SamplingBlockRepr::ToolResult(c) => SamplingMessageContentBlock::ToolResult(c),
        })
    }
}

impl SamplingMessageContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingMessageContentBlock::Text(TextContent::new(text))
    }

    /// The `"type"` tag of this block.
    pub fn type_name(&self) -> &'static str {
        match self {
            SamplingMessageContentBlock::Text(_) => "text",
            SamplingMessageContentBlock::Image(_) => "image",
            SamplingMessageContentBlock::Audio(_) => "audio",
            SamplingMessageContentBlock::ToolUse(_) => "tool_use",
            SamplingMessageContentBlock::ToolResult(_) => "tool_result",
        }
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            SamplingMessageContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl From<TextContent> for SamplingMessageContentBlock {
    fn from(c: TextContent) -> Self {
        SamplingMessageContentBlock::Text(c)
    }
}

impl From<ImageContent> for SamplingMessageContentBlock {
    fn from(c: ImageContent) -> Self {
        SamplingMessageContentBlock::Image(c)
    }
}

impl From<AudioContent> for SamplingMessageContentBlock {
    fn from(c: AudioContent) -> Self {
        SamplingMessageContentBlock::Audio(c)
    }
}

impl From<ToolUseContent> for SamplingMessageContentBlock {
    fn from(c: ToolUseContent) -> Self {
        SamplingMessageContentBlock::ToolUse(c)
    }
}

impl From<ToolResultContent> for SamplingMessageContentBlock {
    fn from(c: ToolResultContent) -> Self {
        SamplingMessageContentBlock::ToolResult(c)
    }
}
