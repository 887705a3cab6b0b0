//! Moving bytes to and from a gateway, under one deadline per call: a plain
//! TCP socket, unframed (the gateway's default transport). The bytes' meaning
//! is the [`codec`](super::codec)'s business; this file only asks it where a
//! reply ends.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};

use super::codec::{DecodeError, Skim, Skimmed};

/// The smallest and largest read: the buffer grows with what arrived (each
/// read asks for about as much as is there already), so that a reply never
/// holds much more memory than its own size.
const MIN_READ: usize = 4 * 1024;
const MAX_READ: usize = 64 * 1024;

/// When a call must be over, and since when it runs.
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    start: Instant,
    end: Instant,
}

impl Deadline {
    /// A deadline `limit` from now.
    pub fn after(limit: Duration) -> Self {
        let start = Instant::now();
        Deadline {
            start,
            end: start
                .checked_add(limit)
                .unwrap_or(start + Duration::from_secs(365 * 24 * 3600)),
        }
    }

    /// The time left, or `None` once it has passed.
    pub fn remaining(&self) -> Option<Duration> {
        self.end.checked_duration_since(Instant::now()).filter(|d| !d.is_zero())
    }

    /// How long the call has run.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// A socket timeout: the time left, at most `cap`; `Err(TimedOut)` once
    /// the deadline has passed.
    fn timeout(&self, cap: Duration) -> Result<Duration, Failure> {
        let left = self.remaining().ok_or(Failure::TimedOut)?;
        // A zero timeout means "none" to the socket: at least a millisecond.
        Ok(left.min(cap).max(Duration::from_millis(1)))
    }
}

/// Why a call's bytes did not make it there and back.
#[derive(Debug)]
pub enum Failure {
    /// The deadline passed (or a read waited longer than the read timeout).
    TimedOut,
    /// The connection failed or was closed; `replied` tells whether this
    /// connection ever carried a reply.
    Io { error: io::Error, replied: bool },
    /// The reply is not a binary Thrift message; `replied` as above.
    Decode { error: DecodeError, replied: bool },
}

/// One connection to a gateway.
pub struct Connection {
    stream: TcpStream,
    /// Bytes received and not yet handed out as a reply.
    buf: BytesMut,
    seq: i32,
    /// Whether a reply has been read on this connection.
    replied: bool,
    /// When the connection was last used, to check idle ones before reuse.
    pub last_used: Instant,
}

impl Connection {
    /// Connects to the first of `address`'s addresses that answers, each
    /// attempt given at most `connect_timeout` and what is left of `deadline`.
    pub fn connect(address: &str, connect_timeout: Duration, deadline: &Deadline) -> Result<Self, Failure> {
        let addrs: Vec<SocketAddr> = address
            .to_socket_addrs()
            .map_err(|error| Failure::Io { error, replied: false })?
            .collect();
        let mut last = io::Error::new(io::ErrorKind::NotFound, "the address resolves to nothing");
        for addr in addrs {
            let timeout = deadline.timeout(connect_timeout)?;
            match TcpStream::connect_timeout(&addr, timeout) {
                Ok(stream) => {
                    stream
                        .set_nodelay(true)
                        .map_err(|error| Failure::Io { error, replied: false })?;
                    return Ok(Connection {
                        stream,
                        buf: BytesMut::new(),
                        seq: 0,
                        replied: false,
                        last_used: Instant::now(),
                    });
                }
                Err(e) if is_timeout(&e) && deadline.remaining().is_none() => return Err(Failure::TimedOut),
                Err(e) => last = e,
            }
        }
        Err(Failure::Io {
            error: last,
            replied: false,
        })
    }

    /// The sequence number of the next call.
    pub fn next_seq(&mut self) -> i32 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    /// Whether the gateway closed the connection while it sat idle: a
    /// non-blocking peek sees the end of the stream (or an error) at once.
    pub fn peer_closed(&self) -> bool {
        if !self.buf.is_empty() || self.stream.set_nonblocking(true).is_err() {
            return true;
        }
        let closed = match self.stream.peek(&mut [0u8; 1]) {
            Ok(_) => true, // the end of the stream, or bytes nobody asked for
            Err(e) => e.kind() != io::ErrorKind::WouldBlock,
        };
        closed || self.stream.set_nonblocking(false).is_err()
    }

    /// Sends `request` and reads one whole reply message, all before
    /// `deadline`; no single read waits longer than `read_timeout`.
    pub fn round_trip(
        &mut self,
        request: &[u8],
        deadline: &Deadline,
        read_timeout: Duration,
    ) -> Result<Bytes, Failure> {
        self.send(request, deadline)?;
        let reply = self.receive(deadline, read_timeout)?;
        self.replied = true;
        self.last_used = Instant::now();
        Ok(reply)
    }

    /// A socket error: a timeout, or the connection failing.
    fn io(&self, error: io::Error) -> Failure {
        if is_timeout(&error) {
            return Failure::TimedOut;
        }
        Failure::Io {
            error,
            replied: self.replied,
        }
    }

    fn send(&mut self, mut request: &[u8], deadline: &Deadline) -> Result<(), Failure> {
        while !request.is_empty() {
            let timeout = deadline.timeout(Duration::MAX)?;
            self.stream.set_write_timeout(Some(timeout)).map_err(|e| self.io(e))?;
            match self.stream.write(request) {
                Ok(0) => {
                    return Err(self.io(io::ErrorKind::WriteZero.into()));
                }
                Ok(n) => request = request.get(n..).unwrap_or_default(),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io(e)),
            }
        }
        Ok(())
    }

    /// Reads until the buffer holds a whole message, and splits it off. The
    /// skim resumes where it stopped after each read.
    fn receive(&mut self, deadline: &Deadline, read_timeout: Duration) -> Result<Bytes, Failure> {
        let mut skim = Skim::new();
        loop {
            match skim.advance(&self.buf) {
                Ok(Skimmed::Done(len)) => return Ok(self.buf.split_to(len).freeze()),
                Ok(Skimmed::NeedMore(_)) => self.fill(deadline, read_timeout)?,
                Err(error) => {
                    return Err(Failure::Decode {
                        error,
                        replied: self.replied,
                    });
                }
            }
        }
    }

    /// One read into the buffer's tail.
    fn fill(&mut self, deadline: &Deadline, read_timeout: Duration) -> Result<(), Failure> {
        let timeout = deadline.timeout(read_timeout)?;
        self.stream.set_read_timeout(Some(timeout)).map_err(|e| self.io(e))?;
        let filled = self.buf.len();
        let want = filled.clamp(MIN_READ, MAX_READ);
        // std's `Read` cannot fill uninitialised memory: the read's room is
        // zeroed first (a memset of at most 64 KiB). The async transport
        // will read into the spare capacity directly.
        self.buf.resize(filled + want, 0);
        let read = self.stream.read(self.buf.get_mut(filled..).unwrap_or_default());
        let got = *read.as_ref().unwrap_or(&0);
        self.buf.truncate(filled + got);
        match read {
            Ok(0) => Err(Failure::Io {
                error: io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("the gateway closed the connection after {filled} bytes of the reply"),
                ),
                replied: self.replied,
            }),
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(self.io(e)),
        }
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock)
}
