//! report.html: one self-contained, XHTML-style file (every tag closed, the
//! plots as inline SVG, the style inline) that references nothing outside.

use crate::Block;

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1100px;color:#222;\
line-height:1.4}table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;\
padding:.25em .6em;text-align:right}th:first-child,td:first-child,th:nth-child(2),\
td:nth-child(2){text-align:left}th{background:#f3f3f3}.warn{background:#fff4e0;\
border-left:4px solid #e69500;padding:.5em 1em}figure{margin:1em 0}\
figcaption{font-size:.9em;color:#555}";

/// Escapes text for element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            _ => o.push(c),
        }
    }
    o
}

pub fn document(title: &str, blocks: &[Block]) -> String {
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n\
         <meta name=\"viewport\" content=\"width=device-width\"/>\n<title>{}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n",
        escape(title)
    );
    for b in blocks {
        match b {
            Block::Heading(l, t) => h.push_str(&format!("<h{l}>{}</h{l}>\n", escape(t))),
            Block::Para(t) => h.push_str(&format!("<p>{}</p>\n", escape(t))),
            Block::List(items) => {
                h.push_str("<ul>\n");
                for i in items {
                    h.push_str(&format!("<li>{}</li>\n", escape(i)));
                }
                h.push_str("</ul>\n");
            }
            Block::Warning(items) => {
                h.push_str("<div class=\"warn\">\n");
                for i in items {
                    h.push_str(&format!("<p>⚠ {}</p>\n", escape(i)));
                }
                h.push_str("</div>\n");
            }
            Block::Table(t) => {
                h.push_str("<table>\n<tr>");
                for c in &t.head {
                    h.push_str(&format!("<th>{}</th>", escape(c)));
                }
                h.push_str("</tr>\n");
                for r in &t.rows {
                    h.push_str("<tr>");
                    for c in r {
                        h.push_str(&format!("<td>{}</td>", escape(c)));
                    }
                    h.push_str("</tr>\n");
                }
                h.push_str("</table>\n");
            }
            Block::Plot { title, svg } => {
                h.push_str(&format!(
                    "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
                    svg.trim(),
                    escape(title)
                ));
            }
        }
    }
    h.push_str("</body>\n</html>\n");
    h
}
