//! How an experiment file's errors are said: one type, [`SpecError`], and
//! one way to make it, [`Source::at`], from a key and the byte span TOML
//! gave its value. Every check — top level, cluster, faults, variants,
//! phases, workload — reports through it, so every error names file, line
//! and key alike.

use std::ops::Range;

/// An error in an experiment file: `file:line: key `k`: message`.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: key `{key}`: {message}")]
pub struct SpecError {
    pub file: String,
    pub line: usize,
    pub key: String,
    pub message: String,
}

/// The file being checked: its name as shown and its text (for lines).
pub struct Source<'a> {
    pub file: String,
    pub text: &'a str,
}

/// What a check returns.
pub type Checked<T> = Result<T, SpecError>;

impl Source<'_> {
    /// The error for `key`, whose value sits at `span` (0..0: a default,
    /// which has no place in the file: line 1).
    pub fn at(&self, key: &str, span: Range<usize>, message: impl Into<String>) -> SpecError {
        SpecError {
            file: self.file.clone(),
            line: if span == (0..0) {
                1
            } else {
                line_of(self.text, span.start)
            },
            key: key.to_string(),
            message: message.into(),
        }
    }

    /// A TOML or serde error (syntax, unknown or missing key, wrong type).
    pub fn from_toml(&self, e: &toml::de::Error) -> SpecError {
        let span = e.span();
        let message = e.message().trim().to_string();
        SpecError {
            file: self.file.clone(),
            line: span
                .clone()
                .map(|r| line_of(self.text, r.start))
                .unwrap_or(1),
            key: key_of(self.text, span, &message),
            message,
        }
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|b| *b == b'\n')
        .count()
        + 1
}

/// The key a serde/TOML error is about, from its message or the text at its span.
fn key_of(text: &str, span: Option<Range<usize>>, message: &str) -> String {
    if let Some(start) = message.find('`')
        && let Some(len) = message[start + 1..].find('`')
        && (message.starts_with("unknown field")
            || message.starts_with("missing field")
            || message.starts_with("duplicate"))
    {
        return message[start + 1..start + 1 + len].to_string();
    }
    if let Some(r) = span {
        // The key that starts the line holding the span.
        let line_start = text[..r.start.min(text.len())]
            .rfind('\n')
            .map(|i| i + 1)
            .unwrap_or(0);
        let line = &text[line_start..];
        let line = line.lines().next().unwrap_or_default();
        if let Some((k, _)) = line.split_once('=') {
            return k.trim().to_string();
        }
        return line
            .trim()
            .trim_matches(|c| c == '[' || c == ']')
            .to_string();
    }
    "(file)".to_string()
}
