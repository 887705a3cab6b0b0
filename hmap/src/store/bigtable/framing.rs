//! A check of gRPC's framing on every reply body, under tonic's decoder.
//!
//! A gRPC reply is a sequence of messages, each a 5-byte header (a
//! compression flag, a 4-byte length) and that many bytes, then trailers
//! with the status. tonic 0.14 drops a message cut short when the trailers
//! come (`Unexpected EOF` is raised only when the body ends without them),
//! so a server that sends half a `ReadRowsResponse` and then an OK status
//! would end a scan as if the rows ran out. [`Framed`] follows the frame
//! boundaries through the body's data and fails the body when its
//! trailers or its end come inside a message.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Buf, Bytes};
use http_body::Frame;
use tonic::codegen::{Body, Service, http};
use tonic::transport::Channel;

/// What a body cut inside a message says; [`super::error`] maps it to
/// `StoreError::Protocol`.
pub(crate) const CUT_SHORT: &str = "a gRPC message cut short";

/// A [`Channel`] whose reply bodies are [`Framed`].
#[derive(Clone, Debug)]
pub(crate) struct Checked(pub(crate) Channel);

impl Service<http::Request<tonic::body::Body>> for Checked {
    type Response = http::Response<tonic::body::Body>;
    type Error = <Channel as Service<http::Request<tonic::body::Body>>>::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
        let reply = self.0.call(request);
        Box::pin(async move { Ok(reply.await?.map(|body| tonic::body::Body::new(Framed::new(body)))) })
    }
}

/// A reply body whose gRPC framing is followed (see the module docs).
#[derive(Debug)]
pub(crate) struct Framed<B> {
    inner: B,
    /// Header bytes of the next message seen so far (0 to 4 of 5).
    header: [u8; 5],
    header_len: usize,
    /// Bytes of the current message still to come.
    body_left: usize,
}

impl<B> Framed<B> {
    fn new(inner: B) -> Self {
        Framed {
            inner,
            header: [0; 5],
            header_len: 0,
            body_left: 0,
        }
    }

    /// Follows `data` through the message boundaries.
    fn follow(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            if self.body_left > 0 {
                let step = self.body_left.min(data.len());
                self.body_left -= step;
                data.advance(step);
                continue;
            }
            let step = (5 - self.header_len).min(data.len());
            self.header[self.header_len..self.header_len + step].copy_from_slice(&data[..step]);
            self.header_len += step;
            data.advance(step);
            if self.header_len == 5 {
                self.header_len = 0;
                let [_, a, b, c, d] = self.header;
                self.body_left = u32::from_be_bytes([a, b, c, d]) as usize;
            }
        }
    }

    /// Whether the body stopped inside a message.
    fn inside_a_message(&self) -> bool {
        self.header_len > 0 || self.body_left > 0
    }

    fn cut_short(&self, at: &str) -> tonic::Status {
        let missing = if self.body_left > 0 {
            format!("{} bytes of its body", self.body_left)
        } else {
            format!("{} bytes of its header", 5 - self.header_len)
        };
        tonic::Status::internal(format!("{CUT_SHORT}: {at} came with {missing} still to come"))
    }
}

impl<B> Body for Framed<B>
where
    B: Body<Data = Bytes> + Unpin + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    this.follow(data);
                } else if frame.is_trailers() && this.inside_a_message() {
                    return Poll::Ready(Some(Err(Box::new(this.cut_short("the status")))));
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Some(Err(e)) => Poll::Ready(Some(Err(e.into()))),
            None if this.inside_a_message() => Poll::Ready(Some(Err(Box::new(this.cut_short("the end"))))),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream() && !self.inside_a_message()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_are_followed_across_pieces() {
        let mut framed = Framed::new(());
        // Two messages (3 bytes, then 0), in pieces that cut everywhere.
        let wire = [0, 0, 0, 0, 3, b'a', b'b', b'c', 0, 0, 0, 0, 0];
        for piece in wire.chunks(2) {
            framed.follow(piece);
        }
        assert!(!framed.inside_a_message());
        framed.follow(&[0, 0, 0]);
        assert!(framed.inside_a_message());
        assert!(
            framed
                .cut_short("the status")
                .message()
                .contains("2 bytes of its header")
        );
        framed.follow(&[0, 9, 1]);
        assert!(framed.cut_short("the end").message().contains("8 bytes of its body"));
    }
}
