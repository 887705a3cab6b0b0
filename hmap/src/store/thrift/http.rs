//! Thrift over HTTP/1.1, sans-IO: a call is one `POST` whose body is the
//! message, the reply the body of its response. A gateway in HTTP mode
//! (`hbase.regionserver.thrift.http`) serves Thrift's `TServlet` under
//! Jetty, which sends each reply with `Transfer-Encoding: chunked` (the
//! servlet flushes before it returns, so Jetty cannot know the length);
//! bodies with a `Content-Length` are read too. Everything is bounded: the
//! head by [`MAX_HEAD`] (Jetty's own limit in HBase's gateway), the body by
//! [`MAX_MESSAGE`], a chunk's size line by [`MAX_CHUNK_LINE`]; a body that
//! runs until the connection closes, a status other than 200, or a body that
//! is not Thrift is an error, never waited for or guessed at.

use bytes::{Buf, BytesMut};

use super::codec::MAX_MESSAGE;

/// The longest response head (status line and headers) accepted: HBase's
/// gateway allows heads of 65,534 bytes (`DEFAULT_HTTP_MAX_HEADER_SIZE`).
pub const MAX_HEAD: usize = 64 * 1024;

/// The longest chunk size line (hex digits and extensions).
const MAX_CHUNK_LINE: usize = 1024;

/// Why a response is not one hmap can read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The response does not start like HTTP.
    #[error("not an HTTP response: it starts with {start:02x?}")]
    NotHttp {
        /// Its first bytes (at most 8).
        start: Vec<u8>,
    },
    /// The head is not HTTP/1.x, or a header is malformed.
    #[error("not an HTTP/1.1 response: {0}")]
    Malformed(String),
    /// The head is longer than [`MAX_HEAD`].
    #[error("an HTTP response head of more than {MAX_HEAD} bytes")]
    HeadTooLong,
    /// A status other than 200.
    #[error("the gateway answered HTTP {status} {reason}")]
    Status {
        /// The status code.
        status: u16,
        /// The reason phrase.
        reason: String,
    },
    /// A body whose length is not said (it would end when the connection
    /// closes), or said two ways, or an encoding other than chunked.
    #[error("an HTTP body hmap cannot delimit: {0}")]
    Unframed(String),
    /// A body longer than a reply may be.
    #[error("an HTTP body of {len} bytes or more, more than the {MAX_MESSAGE} a reply may take")]
    TooLong {
        /// How long it is said (or found) to be, at least.
        len: u64,
    },
    /// A content type other than Thrift's.
    #[error("an HTTP body of type `{0}`, not application/x-thrift")]
    ContentType(String),
    /// A malformed chunk.
    #[error("a malformed chunk: {0}")]
    Chunk(String),
}

/// How a response's body is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    /// Exactly this many bytes.
    Length(usize),
    /// Chunks, until a chunk of size 0.
    Chunked,
}

/// A response head that hmap accepts: status 200, a delimited body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// How the body is delimited.
    pub body: Body,
    /// Whether the gateway closes the connection after this response.
    pub close: bool,
}

/// The request head for a `POST` of `len` bytes to `path` on `host`.
pub fn request_head(host: &str, path: &str, len: usize, extra_headers: &str) -> Vec<u8> {
    format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-thrift\r\n\
         Accept: application/x-thrift\r\nUser-Agent: hmap/{}\r\n{extra_headers}Content-Length: {len}\r\n\r\n",
        env!("CARGO_PKG_VERSION")
    )
    .into_bytes()
}

/// The response head at the start of `buf`, and its length, once all of it
/// is there (`None` before).
pub fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, HttpError> {
    // A reply that does not start like HTTP is refused at once.
    let start = &buf[..buf.len().min(5)];
    if !b"HTTP/".starts_with(start) {
        return Err(HttpError::NotHttp {
            start: buf[..buf.len().min(8)].to_vec(),
        });
    }
    let Some(end) = memchr::memmem::find(buf, b"\r\n\r\n") else {
        if buf.len() > MAX_HEAD {
            return Err(HttpError::HeadTooLong);
        }
        return Ok(None);
    };
    if end + 4 > MAX_HEAD {
        return Err(HttpError::HeadTooLong);
    }
    let head = std::str::from_utf8(&buf[..end]).map_err(|_| HttpError::Malformed("a head that is not text".into()))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(HttpError::Malformed(format!("the status line `{}`", cut(status_line))));
    }
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| HttpError::Malformed(format!("the status line `{}`", cut(status_line))))?;
    let reason = parts.next().unwrap_or_default();
    if status != 200 {
        return Err(HttpError::Status {
            status,
            reason: cut(reason).to_string(),
        });
    }
    let mut length = None;
    let mut chunked = false;
    let mut close = version == "HTTP/1.0";
    for line in lines {
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| HttpError::Malformed(format!("the header line `{}`", cut(line))))?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            let len: u64 = value
                .parse()
                .map_err(|_| HttpError::Malformed(format!("Content-Length `{}`", cut(value))))?;
            if length.is_some_and(|l| l != len) {
                return Err(HttpError::Unframed("two different Content-Lengths".into()));
            }
            length = Some(len);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            if !value.eq_ignore_ascii_case("chunked") {
                return Err(HttpError::Unframed(format!("Transfer-Encoding `{}`", cut(value))));
            }
            chunked = true;
        } else if name.eq_ignore_ascii_case("connection") {
            close = value.split(',').any(|v| v.trim().eq_ignore_ascii_case("close"));
        } else if name.eq_ignore_ascii_case("content-type") && !value.starts_with("application/x-thrift") {
            return Err(HttpError::ContentType(cut(value).to_string()));
        }
    }
    let body = match (length, chunked) {
        (Some(_), true) => return Err(HttpError::Unframed("both Content-Length and chunked".into())),
        (Some(len), false) if len > MAX_MESSAGE as u64 => return Err(HttpError::TooLong { len }),
        (Some(len), false) => Body::Length(len as usize),
        (None, true) => Body::Chunked,
        (None, false) => return Err(HttpError::Unframed("neither a Content-Length nor chunks".into())),
    };
    Ok(Some((Head { body, close }, end + 4)))
}

/// At most 80 characters of a header, for an error message.
fn cut(s: &str) -> &str {
    match s.char_indices().nth(80) {
        Some((at, _)) => &s[..at],
        None => s,
    }
}

/// Decodes a chunked body as its bytes arrive, into one buffer.
#[derive(Debug, Default)]
pub struct Chunked {
    /// Bytes of the current chunk not yet taken.
    left: usize,
    /// Whether the current chunk's data is followed by a CRLF still due.
    crlf_due: bool,
    /// Whether the last chunk (size 0) has been read: trailers follow.
    last: bool,
    /// The body so far.
    pub body: BytesMut,
}

impl Chunked {
    /// Takes what it can from `buf` (which keeps what it did not take):
    /// `true` once the whole body, trailers included, has been read.
    pub fn advance(&mut self, buf: &mut BytesMut) -> Result<bool, HttpError> {
        loop {
            if self.left > 0 {
                let n = self.left.min(buf.len());
                if n == 0 {
                    return Ok(false);
                }
                self.body.extend_from_slice(&buf[..n]);
                buf.advance(n);
                self.left -= n;
                continue;
            }
            if self.crlf_due {
                if buf.len() < 2 {
                    return Ok(false);
                }
                if &buf[..2] != b"\r\n" {
                    return Err(HttpError::Chunk("data not followed by CRLF".into()));
                }
                buf.advance(2);
                self.crlf_due = false;
            }
            let Some(end) = memchr::memmem::find(&buf[..buf.len().min(MAX_CHUNK_LINE + 2)], b"\r\n") else {
                if buf.len() > MAX_CHUNK_LINE {
                    return Err(HttpError::Chunk(format!("a line of more than {MAX_CHUNK_LINE} bytes")));
                }
                return Ok(false);
            };
            let line = buf.split_to(end + 2);
            let line = &line[..end];
            if self.last {
                // Trailers, until an empty line; bounded by the body limit.
                if line.is_empty() {
                    return Ok(true);
                }
                continue;
            }
            let size = line.split(|&b| b == b';').next().unwrap_or_default();
            let size = std::str::from_utf8(size)
                .ok()
                .map(str::trim)
                .filter(|s| !s.is_empty() && s.len() <= 16)
                .and_then(|s| u64::from_str_radix(s, 16).ok())
                .ok_or_else(|| {
                    HttpError::Chunk(format!(
                        "the size line {:?}",
                        String::from_utf8_lossy(&line[..line.len().min(40)])
                    ))
                })?;
            let total = self.body.len() as u64 + size;
            if total > MAX_MESSAGE as u64 {
                return Err(HttpError::TooLong { len: total });
            }
            if size == 0 {
                self.last = true;
            } else {
                self.left = size as usize;
                self.crlf_due = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> Result<Option<(Head, usize)>, HttpError> {
        parse_head(text.as_bytes())
    }

    /// The head HBase 2.6.1's HTTPS gateway sends (Jetty, headers as seen
    /// with curl).
    const HBASE_HEAD: &str = "HTTP/1.1 200 OK\r\nX-Frame-Options: DENY\r\nX-Content-Type-Options: nosniff\r\n\
        X-XSS-Protection: 1; mode=block\r\nStrict-Transport-Security: max-age=63072000;includeSubDomains;preload\r\n\
        Content-Security-Policy: default-src https: data: 'unsafe-inline' 'unsafe-eval'\r\n\
        Content-Type: application/x-thrift\r\nTransfer-Encoding: chunked\r\n\r\n";

    #[test]
    fn the_gateway_s_head_is_chunked_and_kept_alive() {
        let (h, len) = head(HBASE_HEAD).unwrap().unwrap();
        assert_eq!(
            h,
            Head {
                body: Body::Chunked,
                close: false
            }
        );
        assert_eq!(len, HBASE_HEAD.len());
        // Any prefix waits for more.
        for end in 0..HBASE_HEAD.len() {
            assert_eq!(parse_head(&HBASE_HEAD.as_bytes()[..end]), Ok(None), "{end}");
        }
    }

    #[test]
    fn content_length_and_connection_close() {
        let (h, _) = head("HTTP/1.1 200 OK\r\ncontent-length: 27\r\nConnection: close\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(
            h,
            Head {
                body: Body::Length(27),
                close: true
            }
        );
    }

    #[test]
    fn unexpected_heads_are_typed_errors() {
        /// Whether an error is the one expected.
        type Is = fn(&HttpError) -> bool;
        let cases: [(&str, Is); 9] = [
            ("HTTP/1.1 404 Not Found\r\n\r\n", |e| {
                matches!(e, HttpError::Status { status: 404, .. })
            }),
            ("HTTP/1.1 200 OK\r\n\r\n", |e| matches!(e, HttpError::Unframed(_))),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", |e| {
                matches!(e, HttpError::Unframed(_))
            }),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
                |e| matches!(e, HttpError::Unframed(_)),
            ),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
                |e| matches!(e, HttpError::Unframed(_)),
            ),
            ("HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n", |e| {
                matches!(e, HttpError::TooLong { .. })
            }),
            ("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", |e| {
                matches!(e, HttpError::Malformed(_))
            }),
            (
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1\r\n\r\n",
                |e| matches!(e, HttpError::ContentType(_)),
            ),
            ("SSH-2.0-OpenSSH\r\n\r\n", |e| matches!(e, HttpError::NotHttp { .. })),
        ];
        for (text, expected) in cases {
            let got = head(text);
            assert!(matches!(&got, Err(e) if expected(e)), "{text:?}: {got:?}");
        }
        // Not HTTP at all is refused at the first bytes, not waited on.
        assert!(matches!(parse_head(&[0x80, 1, 0, 2]), Err(HttpError::NotHttp { .. })));
        // A head that never ends is refused at the limit.
        let endless = format!("HTTP/1.1 200 OK\r\nX: {}", "a".repeat(MAX_HEAD));
        assert_eq!(head(&endless), Err(HttpError::HeadTooLong));
    }

    /// Decodes `chunks` fed `step` bytes at a time.
    fn dechunk(chunks: &[u8], step: usize) -> Result<(Vec<u8>, usize), HttpError> {
        let mut chunked = Chunked::default();
        let mut buf = BytesMut::new();
        for piece in chunks.chunks(step) {
            buf.extend_from_slice(piece);
            if chunked.advance(&mut buf)? {
                return Ok((chunked.body.to_vec(), buf.len()));
            }
        }
        Err(HttpError::Chunk("never done".into()))
    }

    #[test]
    fn chunks_are_joined_whatever_the_pieces() {
        let chunks = b"7\r\n\x80\x01\x00\x02\x00\x00\x00\r\n1a;ext=1\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nTrailer: x\r\n\r\nNEXT";
        for step in 1..chunks.len() {
            let (body, rest) = dechunk(chunks, step).unwrap();
            assert_eq!(body.len(), 7 + 26, "{step}");
            // What follows the body stays in the buffer.
            assert!(rest <= 4, "{step}");
        }
    }

    #[test]
    fn malformed_or_huge_chunks_are_refused() {
        for chunks in [
            &b"zz\r\n"[..],
            b"\r\n",
            b"5\r\nabcdeXX",
            b"ffffffffffffffffff\r\n",
            b"7fffffff\r\n",
        ] {
            let got = dechunk(chunks, chunks.len());
            assert!(
                matches!(got, Err(HttpError::Chunk(_) | HttpError::TooLong { .. })),
                "{chunks:?}: {got:?}"
            );
        }
        // A size line that never ends.
        let mut endless = b"1".to_vec();
        endless.extend(std::iter::repeat_n(b'0', MAX_CHUNK_LINE + 10));
        assert!(matches!(
            Chunked::default().advance(&mut BytesMut::from(&endless[..])),
            Err(HttpError::Chunk(_))
        ));
        // Chunks adding up past the limit, each small.
        let mut chunked = Chunked::default();
        chunked.body.resize(MAX_MESSAGE - 1, 0);
        assert!(matches!(
            chunked.advance(&mut BytesMut::from(&b"2\r\n"[..])),
            Err(HttpError::TooLong { .. })
        ));
    }
}
