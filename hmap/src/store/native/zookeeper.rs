//! The ZooKeeper connection registry: where `hbase:meta` and the active
//! master are, read from the znodes HBase keeps in ZooKeeper, as the Java
//! client's `ZKConnectionRegistry` reads them. For clusters older than
//! HBase 2.5, whose masters and region servers do not answer
//! `ClientMetaService` ([`NativeConfig::zookeeper`](super::NativeConfig::zookeeper)).
//!
//! # The znodes
//! Under the parent znode (`zookeeper.znode.parent`, `/hbase` by default):
//! - `hbaseid`: the cluster id (`ClusterId.proto`); read first, so that a
//!   wrong parent, or an HBase that never started, is named as such;
//! - `meta-region-server`: the server of `hbase:meta`'s default replica
//!   (`ZooKeeper.proto`'s `MetaRegionServer`); the region is always
//!   `hbase:meta,,1` (`RegionInfoBuilder.FIRST_META_REGIONINFO`);
//! - `master`: the active master (`ZooKeeper.proto`'s `Master`).
//!
//! Their data is HBase's, laid out by `ZKMetadata.appendMetaData` and
//! `ProtobufUtil.prependPBMagic`: the byte `0xFF`, a 4-byte big-endian
//! length, that many bytes naming the writer (`pid@host` and an 8-byte
//! salt), then `PBUF` and the protobuf message. Data without the leading
//! `0xFF` has no metadata (`ZKMetadata.removeMetaData`); an `hbaseid`
//! without `PBUF` is the id as plain text (`ClusterId.parseFrom`, the old
//! format).
//!
//! # The client
//! A minimal ZooKeeper client of its own, written here: one TCP
//! connection, the session handshake (`ConnectRequest`), `getData` without
//! watches, and `closeSession`, in jute's binary encoding (big-endian
//! integers, buffers and strings with a 4-byte length, `-1` for null),
//! after `zookeeper.jute`, `ClientCnxn` and `ZooDefs.OpCode` of
//! ZooKeeper 3.x. A session lives for one lookup: the registry is read at
//! `connect`, and again only when a cached location goes stale.
//!
//! Decision: `zookeeper-client` 0.11.2 (kezhuw, maintained, async) resolves
//! here, but it was not taken. Its sockets and timers are `async-net` and
//! `async-io` even under its `tokio` feature, so it runs smol's reactor
//! (a thread of its own) beside tokio's; and it adds 89 crates to hmap's
//! 56 (syn 1, thiserror 1, two hashbrowns, strum, num_enum, ...) for four
//! requests. These few hundred lines need no new dependency and no cargo
//! feature: they are part of `native`.
//!
//! Every read is bounded: a frame longer than ZooKeeper's own client limit
//! (`jute.maxbuffer`, 0xfffff bytes) is refused before it is read, every
//! length is checked against the bytes there, and nothing panics on a
//! server's bytes. The whole lookup (dialling each server of the quorum in
//! turn, the handshake, the reads) runs within the caller's deadline, each
//! server given an equal share of the time left; every error names the
//! znode being read.

use std::time::Instant;

use bytes::{BufMut, Bytes, BytesMut};
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

// The registry's error is kept with the other errors, which wrap it
// (`NativeError::ZooKeeper`); it is named here too, where it was first.
pub use super::error::ZooKeeperError;
use super::proto::{self, region_state::State};

/// The parent znode unless `zookeeper.znode.parent` says otherwise.
pub const DEFAULT_ZNODE_PARENT: &str = "/hbase";

/// ZooKeeper's client port when a quorum member names none.
pub const DEFAULT_PORT: u16 = 2181;

/// The znode of the cluster id, under the parent.
pub const CLUSTER_ID_ZNODE: &str = "hbaseid";
/// The znode of `hbase:meta`'s server (default replica), under the parent.
pub const META_ZNODE: &str = "meta-region-server";
/// The znode of the active master, under the parent.
pub const MASTER_ZNODE: &str = "master";

/// ZooKeeper's client limit on a frame (`jute.maxbuffer`'s default,
/// `ZKClientConfig.CLIENT_MAX_PACKET_LENGTH_DEFAULT`).
pub const MAX_FRAME: usize = 0xfffff;

/// The session timeout asked for (ZooKeeper clamps it to its own bounds);
/// it matters only if the session is not closed, as a crash leaves it.
const SESSION_TIMEOUT_MS: i32 = 10_000;

// `ZooDefs.OpCode`.
const OP_GET_DATA: i32 = 4;
const OP_SASL: i32 = 102;
const OP_CLOSE_SESSION: i32 = -11;
// `ClientCnxn`: the xids of replies no request asked for.
const XID_NOTIFICATION: i32 = -1;
const XID_PING: i32 = -2;
// `KeeperException.Code`.
const ERR_NO_NODE: i32 = -101;

/// `Stat`'s size in jute: 6 longs and 5 ints.
const STAT_LEN: usize = 6 * 8 + 5 * 4;

/// A ZooKeeper quorum an HBase cluster registers itself in.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ZooKeeperRegistry {
    /// The quorum's servers, `host:port`, tried in order.
    pub quorum: Vec<String>,
    /// The parent znode, HBase's `zookeeper.znode.parent` ([`DEFAULT_ZNODE_PARENT`]).
    pub znode_parent: String,
    /// A Kerberos login by SASL for a ZooKeeper that demands it (feature
    /// `kerberos`): `NativeStore::connect` sets it from
    /// [`Kerberos::zookeeper_principal`](crate::security::Kerberos::zookeeper_principal).
    #[cfg(feature = "kerberos")]
    pub sasl: Option<crate::security::Kerberos>,
}

impl ZooKeeperRegistry {
    /// The quorum `host:port,host:port` (a host without a port gets
    /// ZooKeeper's 2181), under the parent `/hbase`.
    pub fn new(quorum: &str) -> Self {
        ZooKeeperRegistry {
            quorum: quorum
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| {
                    if s.rsplit_once(':').is_some_and(|(_, port)| port.parse::<u16>().is_ok()) {
                        s.to_string()
                    } else {
                        format!("{s}:{DEFAULT_PORT}")
                    }
                })
                .collect(),
            znode_parent: DEFAULT_ZNODE_PARENT.to_string(),
            #[cfg(feature = "kerberos")]
            sasl: None,
        }
    }

    /// Sets the parent znode (HBase's `zookeeper.znode.parent`).
    pub fn znode_parent(mut self, parent: impl Into<String>) -> Self {
        self.znode_parent = parent.into();
        self
    }

    /// The path of `name` under the parent (`/hbase/master`).
    pub fn znode(&self, name: &str) -> String {
        let parent = self.znode_parent.trim_end_matches('/');
        if parent.starts_with('/') {
            format!("{parent}/{name}")
        } else {
            format!("/{parent}/{name}")
        }
    }
}

// ------------------------------------------------------------ the encoding

/// `ConnectRequest` for a new session, framed: protocol version 0, no zxid
/// seen, the session timeout, session id 0, a 16-byte zero password
/// (`ClientCnxn`'s `new byte[16]`), not read-only.
pub fn encode_connect() -> Vec<u8> {
    let mut body = BytesMut::with_capacity(44);
    body.put_i32(0); // protocolVersion
    body.put_i64(0); // lastZxidSeen
    body.put_i32(SESSION_TIMEOUT_MS); // timeOut
    body.put_i64(0); // sessionId
    body.put_i32(16); // passwd: a buffer of 16 bytes
    body.put_bytes(0, 16);
    body.put_u8(0); // readOnly
    frame(&body)
}

/// `RequestHeader` and `GetDataRequest` (no watch), framed.
pub fn encode_get_data(xid: i32, path: &str) -> Vec<u8> {
    let mut body = BytesMut::with_capacity(13 + path.len());
    body.put_i32(xid);
    body.put_i32(OP_GET_DATA);
    // ustring: a 4-byte length, then UTF-8; a znode path is far shorter
    // than `i32::MAX`.
    body.put_i32(i32::try_from(path.len()).unwrap_or(i32::MAX));
    body.put_slice(path.as_bytes());
    body.put_u8(0); // watch
    frame(&body)
}

/// `RequestHeader` and `GetSASLRequest` (one SASL token), framed.
pub fn encode_sasl(xid: i32, token: &[u8]) -> Vec<u8> {
    let mut body = BytesMut::with_capacity(12 + token.len());
    body.put_i32(xid);
    body.put_i32(OP_SASL);
    // A Kerberos token is a few KiB.
    body.put_i32(i32::try_from(token.len()).unwrap_or(i32::MAX));
    body.put_slice(token);
    frame(&body)
}

/// `RequestHeader` of `closeSession` (no body), framed.
pub fn encode_close(xid: i32) -> Vec<u8> {
    let mut body = BytesMut::with_capacity(8);
    body.put_i32(xid);
    body.put_i32(OP_CLOSE_SESSION);
    frame(&body)
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + body.len());
    // Every body here is a few dozen bytes plus a path.
    out.extend_from_slice(&u32::try_from(body.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(body);
    out
}

/// Jute's binary decoding over a frame's body: every read checked.
struct Jute<'a> {
    rest: &'a [u8],
}

impl<'a> Jute<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if self.rest.len() < n {
            return Err(format!("truncated {what}: {n} bytes needed, {} there", self.rest.len()));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn int(&mut self, what: &str) -> Result<i32, String> {
        let b = self.take(4, what)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn long(&mut self, what: &str) -> Result<i64, String> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }

    /// A buffer: `None` for jute's null (length -1).
    fn buffer(&mut self, what: &str) -> Result<Option<&'a [u8]>, String> {
        match self.int(what)? {
            -1 => Ok(None),
            n if n < 0 => Err(format!("{what} has a negative length {n}")),
            n => self.take(n as usize, what).map(Some),
        }
    }
}

/// The server's answer to the handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectResponse {
    /// The session timeout the server granted, in milliseconds.
    pub timeout_ms: i32,
    /// The session's id.
    pub session_id: i64,
}

/// Decodes `ConnectResponse` (a frame's body). Servers before 3.4 send no
/// `readOnly`; a timeout of 0 or less is a refused session.
pub fn decode_connect(body: &[u8]) -> Result<ConnectResponse, String> {
    let mut jute = Jute { rest: body };
    let _protocol_version = jute.int("protocolVersion")?;
    let timeout_ms = jute.int("timeOut")?;
    let session_id = jute.long("sessionId")?;
    let _password = jute.buffer("passwd")?;
    if timeout_ms <= 0 {
        return Err(format!("the server refused the session (timeout {timeout_ms})"));
    }
    Ok(ConnectResponse { timeout_ms, session_id })
}

/// A reply to a request, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// A frame for no request of ours (a ping's reply, a notification): read on.
    Skip,
    /// The znode's data (empty for a null buffer).
    Data(Bytes),
    /// An error code (`KeeperException.Code`), such as -101, no node.
    Error(i32),
}

/// Decodes a `ReplyHeader` (a frame's body) for the request `xid`:
/// `Ok(Ok(rest))` for a success, with the bytes after it; `Ok(Err(reply))`
/// for a frame to skip or an error code.
fn reply_header<'a>(body: &'a [u8], xid: i32) -> Result<Result<Jute<'a>, Reply>, String> {
    let mut jute = Jute { rest: body };
    let got = jute.int("reply header")?;
    let _zxid = jute.long("reply header")?;
    let err = jute.int("reply header")?;
    if got == XID_NOTIFICATION || got == XID_PING {
        return Ok(Err(Reply::Skip));
    }
    if got != xid {
        return Err(format!("a reply to request {got}, while request {xid} waits"));
    }
    if err != 0 {
        return Ok(Err(Reply::Error(err)));
    }
    Ok(Ok(jute))
}

/// Decodes a `ReplyHeader` and, for a success, the `GetDataResponse`
/// after it (a frame's body), for the request `xid`.
pub fn decode_get_data(body: &[u8], xid: i32) -> Result<Reply, String> {
    let mut jute = match reply_header(body, xid)? {
        Ok(jute) => jute,
        Err(reply) => return Ok(reply),
    };
    let data = jute.buffer("the znode's data")?.unwrap_or_default();
    jute.take(STAT_LEN, "the znode's stat")?;
    Ok(Reply::Data(Bytes::copy_from_slice(data)))
}

/// Decodes a `ReplyHeader` and, for a success, the `SetSASLResponse`
/// after it (the server's SASL token, [`Reply::Data`]; empty for a null
/// buffer), for the request `xid`.
pub fn decode_sasl(body: &[u8], xid: i32) -> Result<Reply, String> {
    let mut jute = match reply_header(body, xid)? {
        Ok(jute) => jute,
        Err(reply) => return Ok(reply),
    };
    let token = jute.buffer("the server's SASL token")?.unwrap_or_default();
    Ok(Reply::Data(Bytes::copy_from_slice(token)))
}

// ------------------------------------------------------- the znodes' data

/// HBase's data without `ZKMetadata`'s prefix (`0xFF`, a 4-byte length,
/// the writer's id): data without the `0xFF` is returned whole.
pub fn strip_metadata(data: &[u8]) -> Result<&[u8], String> {
    let Some((&0xFF, rest)) = data.split_first() else {
        return Ok(data);
    };
    let Some((len, rest)) = rest.split_first_chunk::<4>() else {
        return Err(format!("the metadata prefix is cut short ({} bytes)", data.len()));
    };
    let len = i32::from_be_bytes(*len);
    if len < 0 || len as usize > rest.len() {
        return Err(format!(
            "the metadata prefix announces a {len}-byte id, {} bytes follow",
            rest.len()
        ));
    }
    Ok(&rest[len as usize..])
}

/// The protobuf message after metadata and `PBUF`.
fn message<M: Message + Default>(data: &[u8], what: &str) -> Result<M, String> {
    if data.is_empty() {
        return Err("the znode is empty".to_string());
    }
    let data = strip_metadata(data)?;
    let Some(pb) = data.strip_prefix(b"PBUF") else {
        return Err(format!("no PBUF magic before the {what}"));
    };
    M::decode(pb).map_err(|e| format!("invalid {what}: {e}"))
}

/// `host:port` of a server name, with `default_port` when it names none.
fn address(server: &proto::ServerName, default_port: u32, what: &str) -> Result<String, String> {
    if server.host_name.is_empty() {
        return Err(format!("the {what} has no host name"));
    }
    Ok(format!("{}:{}", server.host_name, server.port.unwrap_or(default_port)))
}

/// The active master, `host:port`, from the `master` znode's data.
pub fn decode_master(data: &[u8]) -> Result<String, String> {
    let master: proto::Master = message(data, "Master message")?;
    address(&master.master, 16000, "master")
}

/// `hbase:meta`'s server, `host:port`, and the region's state, from the
/// `meta-region-server` znode's data: `OPEN` when the znode says none,
/// `None` for a state this client does not know (the Java client's proto2
/// parser drops such a value, and reads the server all the same).
pub fn decode_meta(data: &[u8]) -> Result<(String, Option<State>), String> {
    let meta: proto::MetaRegionServer = message(data, "MetaRegionServer message")?;
    let state = match meta.state {
        None => Some(State::Open),
        Some(n) => State::try_from(n).ok(),
    };
    Ok((address(&meta.server, 16020, "meta region server")?, state))
}

/// The cluster id from the `hbaseid` znode's data: a `ClusterId` message,
/// or, without `PBUF`, the id as text (the format before protobuf).
pub fn decode_cluster_id(data: &[u8]) -> Result<String, String> {
    if data.is_empty() {
        return Err("the znode is empty".to_string());
    }
    let data = strip_metadata(data)?;
    let id = match data.strip_prefix(b"PBUF") {
        Some(pb) => {
            proto::ClusterId::decode(pb)
                .map_err(|e| format!("invalid ClusterId message: {e}"))?
                .cluster_id
        }
        None => String::from_utf8(data.to_vec()).map_err(|_| "the cluster id is not text".to_string())?,
    };
    if id.is_empty() {
        return Err("the cluster id is empty".to_string());
    }
    Ok(id)
}

// ------------------------------------------------------------------ the IO

/// One session with one server of the quorum.
struct Session {
    stream: TcpStream,
    server: String,
    xid: i32,
    started: Instant,
}

impl Session {
    fn timeout(&self, znode: &str) -> ZooKeeperError {
        ZooKeeperError::Timeout {
            server: self.server.clone(),
            znode: znode.to_string(),
            elapsed: self.started.elapsed(),
        }
    }

    fn unreachable(&self, znode: &str, reason: impl Into<String>) -> ZooKeeperError {
        ZooKeeperError::Unreachable {
            server: self.server.clone(),
            znode: znode.to_string(),
            reason: reason.into(),
        }
    }

    fn protocol(&self, znode: &str, reason: String) -> ZooKeeperError {
        ZooKeeperError::Protocol {
            server: self.server.clone(),
            znode: znode.to_string(),
            reason,
        }
    }

    /// Dials `server` and opens a session, by `deadline`; `znode` is what
    /// the session is opened to read, for errors.
    async fn open(
        server: &str,
        znode: &str,
        started: Instant,
        deadline: Instant,
        #[cfg(feature = "kerberos")] sasl: Option<&crate::security::Kerberos>,
    ) -> Result<Session, ZooKeeperError> {
        let timeout = || ZooKeeperError::Timeout {
            server: server.to_string(),
            znode: znode.to_string(),
            elapsed: started.elapsed(),
        };
        let stream = match tokio::time::timeout_at(deadline.into(), TcpStream::connect(server)).await {
            Err(_) => return Err(timeout()),
            Ok(Err(e)) => {
                return Err(ZooKeeperError::Unreachable {
                    server: server.to_string(),
                    znode: znode.to_string(),
                    reason: e.to_string(),
                });
            }
            Ok(Ok(stream)) => stream,
        };
        // Small requests, one at a time.
        let _ = stream.set_nodelay(true);
        let mut session = Session {
            stream,
            server: server.to_string(),
            xid: 0,
            started,
        };
        session.send(&encode_connect(), znode, deadline).await?;
        let body = session.read_frame(znode, deadline).await?;
        decode_connect(&body).map_err(|reason| session.protocol(znode, reason))?;
        #[cfg(feature = "kerberos")]
        if let Some(kerberos) = sasl {
            session.authenticate(kerberos, znode, deadline).await?;
        }
        Ok(session)
    }

    /// SASL GSSAPI with the server (ZooKeeper's `sasl` requests, as
    /// `ZooKeeperSaslClient` sends them): each of the client's tokens in a
    /// `GetSASLRequest`, each of the server's in the `SetSASLResponse`,
    /// until the security layer (authentication: ZooKeeper wraps nothing)
    /// is chosen and the server has answered that last token.
    #[cfg(feature = "kerberos")]
    async fn authenticate(
        &mut self,
        kerberos: &crate::security::Kerberos,
        znode: &str,
        deadline: Instant,
    ) -> Result<(), ZooKeeperError> {
        use crate::security::SecurityError;
        use crate::security::kerberos::{GssapiSasl, MAX_ROUNDS, SaslStep};
        let failed = |e: SecurityError, server: &str| match e {
            SecurityError::Kerberos { failure, reason, .. } => ZooKeeperError::Kerberos {
                server: server.to_string(),
                znode: znode.to_string(),
                failure,
                reason,
            },
        };
        let server = self.server.clone();
        let start = GssapiSasl::start(kerberos, &server, "ZooKeeper's SASL quality of protection");
        let (mut sasl, mut token) = match tokio::time::timeout_at(deadline.into(), start).await {
            Err(_) => return Err(self.timeout(znode)),
            Ok(started) => started.map_err(|e| failed(e, &server))?,
        };
        let mut done = false;
        for _ in 0..=MAX_ROUNDS {
            self.xid += 1;
            let xid = self.xid;
            self.send(&encode_sasl(xid, &token), znode, deadline).await?;
            let reply = loop {
                let body = self.read_frame(znode, deadline).await?;
                match decode_sasl(&body, xid).map_err(|reason| self.protocol(znode, reason))? {
                    Reply::Skip => continue,
                    Reply::Data(reply) => break reply,
                    Reply::Error(code) => {
                        return Err(ZooKeeperError::Kerberos {
                            server: server.clone(),
                            znode: znode.to_string(),
                            failure: crate::security::KerberosFailure::Refused,
                            reason: format!(
                                "the server refused the SASL token (error code {code}): is {} its principal \
                                 (`Kerberos::zookeeper_principal`), and are the clocks in step?",
                                sasl.server()
                            ),
                        });
                    }
                }
            };
            if done {
                return Ok(());
            }
            token = match sasl.step(&reply).map_err(|e| failed(e, &server))? {
                SaslStep::Token(next) => next,
                SaslStep::Done { answer, .. } => {
                    done = true;
                    answer
                }
            };
        }
        Err(ZooKeeperError::Kerberos {
            server,
            znode: znode.to_string(),
            failure: crate::security::KerberosFailure::Gssapi,
            reason: format!("the SASL handshake took more than {MAX_ROUNDS} rounds"),
        })
    }

    async fn send(&mut self, bytes: &[u8], znode: &str, deadline: Instant) -> Result<(), ZooKeeperError> {
        match tokio::time::timeout_at(deadline.into(), self.stream.write_all(bytes)).await {
            Err(_) => Err(self.timeout(znode)),
            Ok(Err(e)) => Err(self.unreachable(znode, e.to_string())),
            Ok(Ok(())) => Ok(()),
        }
    }

    /// One frame's body: its length checked against [`MAX_FRAME`] before
    /// anything is allocated.
    async fn read_frame(&mut self, znode: &str, deadline: Instant) -> Result<Vec<u8>, ZooKeeperError> {
        let closed = |e: std::io::Error| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                "the server closed the connection".to_string()
            } else {
                e.to_string()
            }
        };
        let mut len = [0u8; 4];
        match tokio::time::timeout_at(deadline.into(), self.stream.read_exact(&mut len)).await {
            Err(_) => return Err(self.timeout(znode)),
            Ok(Err(e)) => return Err(self.unreachable(znode, closed(e))),
            Ok(Ok(_)) => {}
        }
        let len = i32::from_be_bytes(len);
        if len < 0 || len as usize > MAX_FRAME {
            return Err(self.protocol(znode, format!("a frame of {len} bytes (the limit is {MAX_FRAME})")));
        }
        let mut body = vec![0u8; len as usize];
        match tokio::time::timeout_at(deadline.into(), self.stream.read_exact(&mut body)).await {
            Err(_) => Err(self.timeout(znode)),
            Ok(Err(e)) => Err(self.unreachable(znode, closed(e))),
            Ok(Ok(_)) => Ok(body),
        }
    }

    /// The data of `znode`, `None` if it does not exist.
    async fn get(&mut self, znode: &str, deadline: Instant) -> Result<Option<Bytes>, ZooKeeperError> {
        self.xid += 1;
        let xid = self.xid;
        self.send(&encode_get_data(xid, znode), znode, deadline).await?;
        loop {
            let body = self.read_frame(znode, deadline).await?;
            match decode_get_data(&body, xid).map_err(|reason| self.protocol(znode, reason))? {
                Reply::Skip => continue,
                Reply::Data(data) => return Ok(Some(data)),
                Reply::Error(ERR_NO_NODE) => return Ok(None),
                Reply::Error(code) => {
                    return Err(ZooKeeperError::Refused {
                        server: self.server.clone(),
                        znode: znode.to_string(),
                        code,
                    });
                }
            }
        }
    }

    /// Asks the server to close the session, without waiting for its
    /// answer (the request is in the socket's buffer at once; if it is not,
    /// the session expires on its own).
    fn close(self) {
        let _ = self.stream.try_write(&encode_close(self.xid + 1));
    }
}

/// Reads `znodes` (paths) in one session with the first server of the
/// quorum that answers, by `deadline`: that server, and the znodes' data in
/// order, `None` for one that does not exist. A server that cannot be
/// reached (or does not answer in time) is passed over for the next, each
/// given an equal share of the time left. When every server of a quorum of
/// several fails so, [`ZooKeeperError::Quorum`] says what each one did.
pub async fn read(
    registry: &ZooKeeperRegistry,
    znodes: &[String],
    deadline: Instant,
) -> Result<(String, Vec<Option<Bytes>>), ZooKeeperError> {
    let started = Instant::now();
    let first = znodes.first().cloned().unwrap_or_default();
    let mut last = None;
    let mut tried = Vec::new();
    let servers = registry.quorum.len();
    for (i, server) in registry.quorum.iter().enumerate() {
        let now = Instant::now();
        let left = deadline.saturating_duration_since(now);
        if left.is_zero() {
            tried.extend(
                registry.quorum[i..]
                    .iter()
                    .map(|server| (server.clone(), "not tried: no time left".to_string())),
            );
            break;
        }
        // The time left divided among the servers still to try.
        let share = now + left / u32::try_from(servers - i).unwrap_or(u32::MAX);
        let attempt = async {
            let mut session = Session::open(
                server,
                &first,
                started,
                share,
                #[cfg(feature = "kerberos")]
                registry.sasl.as_ref(),
            )
            .await?;
            let mut out = Vec::with_capacity(znodes.len());
            for znode in znodes {
                match session.get(znode, share).await {
                    Ok(data) => out.push(data),
                    Err(e) => {
                        session.close();
                        return Err(e);
                    }
                }
            }
            session.close();
            Ok(out)
        };
        match attempt.await {
            Ok(out) => return Ok((server.clone(), out)),
            Err(e @ (ZooKeeperError::Unreachable { .. } | ZooKeeperError::Timeout { .. })) => {
                let what = match &e {
                    ZooKeeperError::Unreachable { reason, .. } => reason.clone(),
                    _ => format!(
                        "no answer within {:?} (its share of the deadline)",
                        super::error::whole_ms(share.saturating_duration_since(now))
                    ),
                };
                tried.push((server.clone(), what));
                last = Some(e);
            }
            Err(e) => return Err(e),
        }
    }
    if servers > 1 {
        return Err(ZooKeeperError::Quorum {
            servers: registry.quorum.join(", "),
            znode: first,
            elapsed: started.elapsed(),
            timed_out: Instant::now() >= deadline,
            tried,
        });
    }
    Err(last.unwrap_or_else(|| match registry.quorum.first() {
        // The deadline had passed before the first server was tried.
        Some(server) => ZooKeeperError::Timeout {
            server: server.clone(),
            znode: first.clone(),
            elapsed: started.elapsed(),
        },
        None => ZooKeeperError::NoQuorum { znode: first },
    }))
}

/// A znode's data decoded, or the error naming it.
fn decoded<T>(
    server: &str,
    znode: &str,
    data: Option<Bytes>,
    decode: impl FnOnce(&[u8]) -> Result<T, String>,
) -> Result<T, ZooKeeperError> {
    let Some(data) = data else {
        return Err(ZooKeeperError::NoNode {
            server: server.to_string(),
            znode: znode.to_string(),
        });
    };
    decode(&data).map_err(|reason| ZooKeeperError::InvalidZnode {
        server: server.to_string(),
        znode: znode.to_string(),
        reason,
    })
}

/// `hbase:meta`'s server from `meta-region-server`'s data: a region not
/// `OPEN` there is used all the same, with a warning, as the Java client does.
fn meta_server(data: &[u8]) -> Result<String, String> {
    let (server, state) = decode_meta(data)?;
    if state != Some(State::Open) {
        tracing::warn!(server = %server, ?state, "hbase:meta is not open on the server ZooKeeper names");
    }
    Ok(server)
}

/// What the registry says at bootstrap, read in one session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registered {
    /// The cluster id.
    pub cluster_id: String,
    /// The server of `hbase:meta`, `host:port`.
    pub meta_server: String,
    /// The active master, `host:port`; `None` while there is none (the
    /// master znode is ephemeral: a cluster between masters has none, and
    /// its data is still served).
    pub master: Option<String>,
}

/// Reads the cluster id, `hbase:meta`'s server and the active master, by
/// `deadline`.
pub async fn bootstrap(registry: &ZooKeeperRegistry, deadline: Instant) -> Result<Registered, ZooKeeperError> {
    let paths = [
        registry.znode(CLUSTER_ID_ZNODE),
        registry.znode(META_ZNODE),
        registry.znode(MASTER_ZNODE),
    ];
    let (server, data) = read(registry, &paths, deadline).await?;
    let mut data = data.into_iter();
    let cluster_id = decoded(&server, &paths[0], data.next().flatten(), decode_cluster_id)?;
    let meta_server = decoded(&server, &paths[1], data.next().flatten(), meta_server)?;
    let master = match data.next().flatten() {
        None => None,
        master => Some(decoded(&server, &paths[2], master, decode_master)?),
    };
    Ok(Registered {
        cluster_id,
        meta_server,
        master,
    })
}

/// Reads one znode (`name` under the parent) and decodes it, by `deadline`.
async fn read_one<T>(
    registry: &ZooKeeperRegistry,
    name: &str,
    deadline: Instant,
    decode: impl FnOnce(&[u8]) -> Result<T, String>,
) -> Result<T, ZooKeeperError> {
    let path = registry.znode(name);
    let (server, data) = read(registry, std::slice::from_ref(&path), deadline).await?;
    decoded(&server, &path, data.into_iter().next().flatten(), decode)
}

/// `hbase:meta`'s server, `host:port`, by `deadline`.
pub async fn meta_location(registry: &ZooKeeperRegistry, deadline: Instant) -> Result<String, ZooKeeperError> {
    read_one(registry, META_ZNODE, deadline, meta_server).await
}

/// The active master, `host:port`, by `deadline`.
pub async fn active_master(registry: &ZooKeeperRegistry, deadline: Instant) -> Result<String, ZooKeeperError> {
    read_one(registry, MASTER_ZNODE, deadline, decode_master).await
}

/// The cluster id, by `deadline`.
pub async fn cluster_id(registry: &ZooKeeperRegistry, deadline: Instant) -> Result<String, ZooKeeperError> {
    read_one(registry, CLUSTER_ID_ZNODE, deadline, decode_cluster_id).await
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use tokio::net::TcpListener;

    use super::*;

    /// A varint, by hand (protobuf's base-128, low group first).
    fn varint(mut n: u64) -> Vec<u8> {
        let mut out = Vec::new();
        while n >= 0x80 {
            out.push((n as u8 & 0x7f) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
        out
    }

    /// A length-delimited protobuf field, by hand.
    fn bytes_field(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut out = vec![tag << 3 | 2];
        out.extend(varint(body.len() as u64));
        out.extend_from_slice(body);
        out
    }

    fn varint_field(tag: u8, n: u64) -> Vec<u8> {
        let mut out = vec![tag << 3];
        out.extend(varint(n));
        out
    }

    /// `ServerName { host_name, port, start_code }`, by hand.
    fn server_name(host: &str, port: u64, start_code: u64) -> Vec<u8> {
        let mut out = bytes_field(1, host.as_bytes());
        out.extend(varint_field(2, port));
        out.extend(varint_field(3, start_code));
        out
    }

    /// A znode's data as `ZKMetadata.appendMetaData` and
    /// `ProtobufUtil.prependPBMagic` lay it out: `0xFF`, the id's length
    /// (4 bytes, big-endian), the id (the writer's name, then an 8-byte
    /// salt), `PBUF`, the message.
    fn znode_data(id: &[u8], salt: [u8; 8], message: &[u8]) -> Vec<u8> {
        let mut out = vec![0xFF];
        out.extend(((id.len() + 8) as u32).to_be_bytes());
        out.extend_from_slice(id);
        out.extend(salt);
        out.extend_from_slice(b"PBUF");
        out.extend_from_slice(message);
        out
    }

    /// The znodes of the shared HBase 2.6.1 (master on 127.0.0.1:46799,
    /// `hbase:meta` on 127.0.0.1:35365), read with this client.
    const REAL_MASTER: &[u8] = include_bytes!("golden/zk_master.bin");
    const REAL_META: &[u8] = include_bytes!("golden/zk_meta_region_server.bin");
    const REAL_CLUSTER_ID: &[u8] = include_bytes!("golden/zk_hbaseid.bin");

    #[test]
    fn real_znodes_are_laid_out_as_documented() {
        // Master { master: ServerName, rpc_version: 0, info_port: -1 as uint32 }.
        let mut master = bytes_field(1, &server_name("127.0.0.1", 46799, 1795433637992));
        master.extend(varint_field(2, 0));
        master.extend(varint_field(3, u64::from(u32::MAX)));
        let hand = znode_data(
            b"master:46799",
            [0xa4, 0x06, 0xc5, 0x0a, 0xdc, 0x14, 0x6f, 0xa4],
            &master,
        );
        assert_eq!(hand, REAL_MASTER);
        // MetaRegionServer { server, rpc_version: 0, state: OPEN (3) }.
        let mut meta = bytes_field(1, &server_name("127.0.0.1", 35365, 1795433639773));
        meta.extend(varint_field(2, 0));
        meta.extend(varint_field(3, 3));
        let hand = znode_data(b"master:46799", [0xcd, 0x74, 0x8a, 0x43, 0x0e, 0xc7, 0x4b, 0x05], &meta);
        assert_eq!(hand, REAL_META);
        // ClusterId { cluster_id }.
        let id = bytes_field(1, b"6ce72390-7584-4a83-a3cc-ac91dd7b7fcf");
        let hand = znode_data(b"master:46799", [0xab, 0x09, 0x36, 0x59, 0x63, 0x67, 0xa5, 0x6f], &id);
        assert_eq!(hand, REAL_CLUSTER_ID);
    }

    #[test]
    fn real_znodes_decode() {
        assert_eq!(decode_master(REAL_MASTER).expect("master"), "127.0.0.1:46799");
        assert_eq!(
            decode_meta(REAL_META).expect("meta"),
            ("127.0.0.1:35365".to_string(), Some(State::Open))
        );
        assert_eq!(
            decode_cluster_id(REAL_CLUSTER_ID).expect("cluster id"),
            "6ce72390-7584-4a83-a3cc-ac91dd7b7fcf"
        );
    }

    #[test]
    fn znodes_without_metadata_or_in_the_old_format_decode() {
        // No 0xFF: no metadata (ZKMetadata.removeMetaData returns it whole).
        let mut data = b"PBUF".to_vec();
        data.extend(bytes_field(1, &server_name("m", 16000, 1)));
        assert_eq!(decode_master(&data).expect("master"), "m:16000");
        // A server name without a port: the master's default.
        let mut data = b"PBUF".to_vec();
        data.extend(bytes_field(1, &bytes_field(1, b"m")));
        assert_eq!(decode_master(&data).expect("master"), "m:16000");
        // No state: OPEN, as the Java client reads it.
        let mut data = b"PBUF".to_vec();
        data.extend(bytes_field(1, &server_name("rs", 16020, 1)));
        assert_eq!(
            decode_meta(&data).expect("meta"),
            ("rs:16020".to_string(), Some(State::Open))
        );
        // The cluster id before protobuf: the id as text.
        assert_eq!(decode_cluster_id(b"abc-123").expect("id"), "abc-123");
        assert_eq!(
            decode_cluster_id(&znode_data(b"x", [0; 8], &bytes_field(1, b"u"))).expect("id"),
            "u"
        );
    }

    #[test]
    fn garbage_in_a_znode_is_an_error_not_a_panic() {
        let master = bytes_field(1, &server_name("m", 1, 1));
        for (data, want) in [
            (Vec::new(), "empty"),
            (vec![0xFF], "cut short"),
            (vec![0xFF, 0, 0], "cut short"),
            (vec![0xFF, 0x7F, 0xFF, 0xFF, 0xFF, b'P'], "announces"),
            (vec![0xFF, 0xFF, 0xFF, 0xFF, 0xFF], "announces"),
            (master.clone(), "no PBUF"),
            (znode_data(b"id", [0; 8], &[0xFF, 0xFF]), "invalid Master"),
            // prost does not enforce `required`: an empty message is a
            // master without a name.
            (znode_data(b"id", [0; 8], &[]), "no host name"),
            (
                znode_data(b"id", [0; 8], &bytes_field(1, &varint_field(2, 1))),
                "no host name",
            ),
            (
                znode_data(b"id", [0; 8], &bytes_field(1, &[0x0a, 0x05, b'h'])),
                "invalid Master",
            ),
            (
                znode_data(b"id", [0; 8], &bytes_field(1, &bytes_field(1, b""))),
                "no host name",
            ),
        ] {
            let err = decode_master(&data).expect_err("garbage");
            assert!(err.contains(want), "{data:?}: {err}");
        }
        let mut meta = bytes_field(1, &server_name("rs", 1, 1));
        meta.extend(varint_field(3, 99));
        // A state this client does not know: the server is read all the same.
        assert_eq!(
            decode_meta(&znode_data(b"id", [0; 8], &meta)).expect("unknown state"),
            ("rs:1".to_string(), None)
        );
        assert!(
            decode_cluster_id(b"\xC3\x28")
                .expect_err("not utf-8")
                .contains("not text")
        );
        assert!(decode_cluster_id(b"PBUF").expect_err("no id").contains("empty"));
        assert!(
            decode_cluster_id(b"PBUF\x0a\x09u")
                .expect_err("cut")
                .contains("invalid ClusterId")
        );
        assert!(decode_cluster_id(&znode_data(b"id", [0; 8], &bytes_field(1, b""))).is_err());
    }

    #[test]
    fn requests_are_encoded_as_the_java_client_does() {
        // ConnectRequest: 45 bytes after the length.
        let mut want = vec![0, 0, 0, 45];
        want.extend([0, 0, 0, 0]); // protocolVersion 0
        want.extend([0; 8]); // lastZxidSeen 0
        want.extend([0, 0, 0x27, 0x10]); // timeOut 10000 ms
        want.extend([0; 8]); // sessionId 0
        want.extend([0, 0, 0, 16]); // passwd: 16 bytes
        want.extend([0; 16]);
        want.push(0); // readOnly false
        assert_eq!(encode_connect(), want);
        // RequestHeader { xid 1, type getData (4) }, GetDataRequest { path, watch false }.
        let mut want = vec![0, 0, 0, 26, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 13];
        want.extend(b"/hbase/master");
        want.push(0);
        assert_eq!(encode_get_data(1, "/hbase/master"), want);
        // RequestHeader { xid 2, type closeSession (-11) }.
        assert_eq!(encode_close(2), [0, 0, 0, 8, 0, 0, 0, 2, 0xFF, 0xFF, 0xFF, 0xF5]);
        // RequestHeader { xid 3, type sasl (102) }, GetSASLRequest { token }.
        assert_eq!(
            encode_sasl(3, b"tok"),
            [0, 0, 0, 15, 0, 0, 0, 3, 0, 0, 0, 102, 0, 0, 0, 3, b't', b'o', b'k']
        );
    }

    #[test]
    fn sasl_replies_decode_and_hostile_ones_are_refused() {
        // ReplyHeader { xid, zxid, err }, SetSASLResponse { token }.
        let sasl_reply = |xid: i32, err: i32, token: Option<&[u8]>| {
            let mut out = Vec::new();
            out.extend(xid.to_be_bytes());
            out.extend(42i64.to_be_bytes());
            out.extend(err.to_be_bytes());
            match token {
                Some(token) => {
                    out.extend((token.len() as i32).to_be_bytes());
                    out.extend_from_slice(token);
                }
                None if err == 0 => out.extend((-1i32).to_be_bytes()),
                None => {}
            }
            out
        };
        assert_eq!(
            decode_sasl(&sasl_reply(3, 0, Some(b"srv")), 3),
            Ok(Reply::Data(Bytes::from_static(b"srv")))
        );
        // The last reply: a null token.
        assert_eq!(decode_sasl(&sasl_reply(3, 0, None), 3), Ok(Reply::Data(Bytes::new())));
        // AUTHFAILED.
        assert_eq!(decode_sasl(&sasl_reply(3, -115, None), 3), Ok(Reply::Error(-115)));
        assert_eq!(decode_sasl(&sasl_reply(XID_PING, 0, None), 3), Ok(Reply::Skip));
        assert!(
            decode_sasl(&sasl_reply(4, 0, Some(b"x")), 3)
                .unwrap_err()
                .contains("request 4")
        );
        // A token longer than the bytes there.
        let mut cut = sasl_reply(3, 0, Some(b"srv"));
        cut.truncate(cut.len() - 1);
        assert!(decode_sasl(&cut, 3).unwrap_err().contains("truncated"));
        let mut negative = sasl_reply(3, 0, None);
        negative.truncate(16);
        negative.extend((-7i32).to_be_bytes());
        assert!(decode_sasl(&negative, 3).unwrap_err().contains("negative"));
    }

    /// A `ConnectResponse` body: version 0, `timeout`, session id 7, a
    /// 16-byte password, `readOnly` if given.
    fn connect_response(timeout: i32, read_only: Option<bool>) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(0i32.to_be_bytes());
        out.extend(timeout.to_be_bytes());
        out.extend(7i64.to_be_bytes());
        out.extend(16i32.to_be_bytes());
        out.extend([0xAB; 16]);
        out.extend(read_only.map(u8::from));
        out
    }

    /// A `ReplyHeader` and, with `data`, a `GetDataResponse`.
    fn reply(xid: i32, err: i32, data: Option<&[u8]>) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(xid.to_be_bytes());
        out.extend(42i64.to_be_bytes());
        out.extend(err.to_be_bytes());
        if let Some(data) = data {
            out.extend((data.len() as i32).to_be_bytes());
            out.extend_from_slice(data);
            out.extend([0; STAT_LEN]);
        }
        out
    }

    #[test]
    fn replies_decode_and_hostile_ones_are_refused() {
        let want = ConnectResponse {
            timeout_ms: 4000,
            session_id: 7,
        };
        assert_eq!(decode_connect(&connect_response(4000, Some(false))), Ok(want.clone()));
        // A server before 3.4: no readOnly.
        assert_eq!(decode_connect(&connect_response(4000, None)), Ok(want));
        assert!(
            decode_connect(&connect_response(0, None))
                .expect_err("refused")
                .contains("refused")
        );
        assert!(decode_connect(&connect_response(4000, None)[..20]).is_err());
        assert!(decode_connect(&[]).is_err());

        assert_eq!(
            decode_get_data(&reply(3, 0, Some(b"xyz")), 3),
            Ok(Reply::Data(Bytes::from_static(b"xyz")))
        );
        assert_eq!(decode_get_data(&reply(3, -101, None), 3), Ok(Reply::Error(-101)));
        assert_eq!(decode_get_data(&reply(-2, 0, None), 3), Ok(Reply::Skip));
        assert_eq!(decode_get_data(&reply(-1, 0, None), 3), Ok(Reply::Skip));
        // A null buffer: empty data.
        let mut null = reply(3, 0, None);
        null.extend((-1i32).to_be_bytes());
        null.extend([0; STAT_LEN]);
        assert_eq!(decode_get_data(&null, 3), Ok(Reply::Data(Bytes::new())));
        assert!(
            decode_get_data(&reply(4, 0, None), 3)
                .expect_err("xid")
                .contains("request 4")
        );
        let full = reply(3, 0, Some(b"xyz"));
        assert!(
            decode_get_data(&full[..full.len() - 1], 3)
                .expect_err("stat")
                .contains("stat")
        );
        for len in [-2i32, i32::MAX, 1 << 20] {
            let mut bad = reply(3, 0, None);
            bad.extend(len.to_be_bytes());
            bad.extend([0; 8]);
            assert!(decode_get_data(&bad, 3).is_err(), "length {len}");
        }
        for cut in 0..16 {
            assert!(decode_get_data(&full[..cut], 3).is_err(), "cut at {cut}");
        }
    }

    /// Every decoder on `bytes`: none may panic.
    fn decode_all(bytes: &[u8]) {
        let _ = decode_connect(bytes);
        let _ = decode_get_data(bytes, 1);
        let _ = strip_metadata(bytes);
        let _ = decode_master(bytes);
        let _ = decode_meta(bytes);
        let _ = decode_cluster_id(bytes);
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            decode_all(&bytes);
        }

        #[test]
        fn damaged_real_znodes_never_panic(
            which in 0usize..3,
            at in proptest::num::usize::ANY,
            byte in proptest::num::u8::ANY,
            cut in proptest::num::usize::ANY,
        ) {
            let real = [REAL_MASTER, REAL_META, REAL_CLUSTER_ID][which];
            let mut data = real.to_vec();
            let at = at % data.len();
            data[at] = byte;
            data.truncate(cut % (data.len() + 1));
            decode_all(&data);
            // In a reply too.
            decode_all(&reply(1, 0, Some(&data)));
        }
    }

    #[test]
    fn znode_paths_and_quorums() {
        let registry = ZooKeeperRegistry::new(" zk1:2181, zk2 ,,[::1]:2182");
        assert_eq!(registry.quorum, ["zk1:2181", "zk2:2181", "[::1]:2182"]);
        assert_eq!(registry.znode(MASTER_ZNODE), "/hbase/master");
        assert_eq!(
            registry.clone().znode_parent("/hbase-unsecure/").znode(META_ZNODE),
            "/hbase-unsecure/meta-region-server"
        );
        assert_eq!(registry.znode_parent("hb").znode(CLUSTER_ID_ZNODE), "/hb/hbaseid");
    }

    /// What the fake server answers to a `getData` of a path.
    #[derive(Clone)]
    enum Answer {
        /// The data, with the metadata prefix and the magic.
        Data(Vec<u8>),
        /// An error code.
        Error(i32),
        /// These bytes as they are (a frame, or garbage), then the
        /// connection closed.
        Raw(Vec<u8>),
        /// Nothing, ever.
        Silence,
    }

    /// A fake ZooKeeper server: the handshake unless `mute`, then each
    /// `getData` answered by `answer`. Returns its address.
    async fn fake_zookeeper(mute: bool, answer: impl Fn(&str) -> Answer + Send + Sync + 'static) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address").to_string();
        let answer = Arc::new(answer);
        tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                let answer = answer.clone();
                tokio::spawn(async move {
                    let read_frame = async |stream: &mut TcpStream| {
                        let mut len = [0u8; 4];
                        stream.read_exact(&mut len).await.ok()?;
                        let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
                        stream.read_exact(&mut body).await.ok()?;
                        Some(body)
                    };
                    if read_frame(&mut stream).await.is_none() {
                        return;
                    }
                    if mute {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        return;
                    }
                    let _ = stream.write_all(&frame(&connect_response(4000, Some(false)))).await;
                    while let Some(body) = read_frame(&mut stream).await {
                        let xid = i32::from_be_bytes([body[0], body[1], body[2], body[3]]);
                        let op = i32::from_be_bytes([body[4], body[5], body[6], body[7]]);
                        if op != OP_GET_DATA {
                            return;
                        }
                        let path = String::from_utf8_lossy(&body[12..body.len() - 1]).into_owned();
                        let bytes = match answer(&path) {
                            Answer::Data(data) => frame(&reply(xid, 0, Some(&data))),
                            Answer::Error(code) => frame(&reply(xid, code, None)),
                            Answer::Raw(bytes) => {
                                let _ = stream.write_all(&bytes).await;
                                return;
                            }
                            Answer::Silence => {
                                tokio::time::sleep(Duration::from_secs(3600)).await;
                                return;
                            }
                        };
                        if stream.write_all(&bytes).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        address
    }

    /// A healthy cluster's znodes.
    fn healthy(path: &str) -> Answer {
        let id = |message: Vec<u8>| Answer::Data(znode_data(b"1@h", [1; 8], &message));
        match path {
            "/hbase/hbaseid" => id(bytes_field(1, b"cluster-1")),
            "/hbase/meta-region-server" => id(bytes_field(1, &server_name("rs", 16020, 5))),
            "/hbase/master" => id(bytes_field(1, &server_name("m", 16000, 5))),
            _ => Answer::Error(ERR_NO_NODE),
        }
    }

    fn deadline(ms: u64) -> Instant {
        Instant::now() + Duration::from_millis(ms)
    }

    #[tokio::test]
    async fn a_cluster_is_read_from_its_znodes() {
        let server = fake_zookeeper(false, healthy).await;
        let registry = ZooKeeperRegistry::new(&server);
        let registered = bootstrap(&registry, deadline(5000)).await.expect("bootstrap");
        assert_eq!(
            registered,
            Registered {
                cluster_id: "cluster-1".into(),
                meta_server: "rs:16020".into(),
                master: Some("m:16000".into()),
            }
        );
        assert_eq!(
            meta_location(&registry, deadline(5000)).await.expect("meta"),
            "rs:16020"
        );
        assert_eq!(
            active_master(&registry, deadline(5000)).await.expect("master"),
            "m:16000"
        );
        assert_eq!(cluster_id(&registry, deadline(5000)).await.expect("id"), "cluster-1");
    }

    #[tokio::test]
    async fn a_server_that_cannot_be_reached_is_passed_over() {
        // A port nothing listens on: bound, then closed.
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let closed = listener.local_addr().expect("address").to_string();
        drop(listener);
        let mute = fake_zookeeper(true, healthy).await;
        let good = fake_zookeeper(false, healthy).await;
        let registry = ZooKeeperRegistry::new(&format!("{closed},{mute},{good}"));
        let started = Instant::now();
        let master = active_master(&registry, deadline(3000))
            .await
            .expect("the third answers");
        assert_eq!(master, "m:16000");
        // The mute server had its share (a third of what was left), no more.
        assert!(
            started.elapsed() < Duration::from_millis(2000),
            "{:?}",
            started.elapsed()
        );
    }

    #[tokio::test]
    async fn a_quorum_that_never_answers_fails_within_one_deadline_saying_what_each_server_did() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let closed = listener.local_addr().expect("address").to_string();
        drop(listener);
        let mute = fake_zookeeper(true, healthy).await;
        let silent = fake_zookeeper(false, |_| Answer::Silence).await;
        let quorum = format!("{closed},{mute},{silent}");
        let started = Instant::now();
        let err = bootstrap(&ZooKeeperRegistry::new(&quorum), deadline(900))
            .await
            .expect_err("no server answers");
        let elapsed = started.elapsed();
        assert!(
            elapsed >= Duration::from_millis(850) && elapsed < Duration::from_millis(1500),
            "{elapsed:?}"
        );
        let message = err.to_string();
        assert!(
            matches!(&err, ZooKeeperError::Quorum { timed_out: true, tried, .. } if tried.len() == 3),
            "{message}"
        );
        for server in [&mute, &silent] {
            assert!(message.contains(&format!("{server}: no answer within")), "{message}");
        }
        assert!(message.contains(&format!("{closed}: ")), "{message}");
        // Through NativeStore::connect: one deadline, and the connect named.
        let config = crate::store::native::NativeConfig::zookeeper(&quorum).call_timeout(Duration::from_millis(900));
        let started = Instant::now();
        let err = crate::store::native::NativeStore::connect(config)
            .await
            .expect_err("no server answers");
        assert!(
            started.elapsed() < Duration::from_millis(1500),
            "{:?}",
            started.elapsed()
        );
        let message = err.to_string();
        assert!(
            err.is_transient() && message.contains("connect timed out after") && message.contains(&silent),
            "{message}"
        );
    }

    #[tokio::test]
    async fn a_missing_znode_is_named() {
        // HBase not started, or another parent.
        let server = fake_zookeeper(false, |_| Answer::Error(ERR_NO_NODE)).await;
        let err = bootstrap(&ZooKeeperRegistry::new(&server), deadline(5000))
            .await
            .expect_err("no node");
        assert!(
            matches!(&err, ZooKeeperError::NoNode { znode, .. } if znode == "/hbase/hbaseid"),
            "{err}"
        );
        assert!(err.to_string().contains("zookeeper.znode.parent"), "{err}");
        // No master (between masters): the bootstrap goes on without one.
        let server = fake_zookeeper(false, |path| match path {
            "/hbase/master" => Answer::Error(ERR_NO_NODE),
            path => healthy(path),
        })
        .await;
        let registry = ZooKeeperRegistry::new(&server);
        assert_eq!(
            bootstrap(&registry, deadline(5000)).await.expect("bootstrap").master,
            None
        );
        let err = active_master(&registry, deadline(5000)).await.expect_err("no master");
        assert!(
            matches!(&err, ZooKeeperError::NoNode { znode, .. } if znode == "/hbase/master"),
            "{err}"
        );
        // Another error code.
        let server = fake_zookeeper(false, |_| Answer::Error(-102)).await;
        let err = meta_location(&ZooKeeperRegistry::new(&server), deadline(5000))
            .await
            .expect_err("no auth");
        assert!(
            matches!(&err, ZooKeeperError::Refused { znode, code: -102, .. } if znode == "/hbase/meta-region-server"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn garbage_and_hostile_servers_give_typed_errors_naming_the_znode() {
        let cases: Vec<(Answer, &str)> = vec![
            (Answer::Data(b"\xFF\x00\x00\x00\x03ab".to_vec()), "InvalidZnode"),
            (Answer::Data(znode_data(b"id", [0; 8], b"\x0a\xff")), "InvalidZnode"),
            (Answer::Data(b"not a znode".to_vec()), "InvalidZnode"),
            // A frame longer than ZooKeeper's limit.
            (Answer::Raw(vec![0x7F, 0xFF, 0xFF, 0xFF]), "Protocol"),
            (Answer::Raw(vec![0xFF, 0xFF, 0xFF, 0xFF]), "Protocol"),
            // A reply to another request.
            (Answer::Raw(frame(&reply(99, 0, Some(b"x")))), "Protocol"),
            // A data buffer longer than the frame.
            (
                Answer::Raw(frame(
                    &reply(1, 0, None).into_iter().chain([0, 0, 1, 0]).collect::<Vec<_>>(),
                )),
                "Protocol",
            ),
            // Half a frame, then the connection closes.
            (Answer::Raw(vec![0, 0, 0, 40, 1, 2]), "Unreachable"),
        ];
        for (answer, kind) in cases {
            let server = fake_zookeeper(false, {
                let answer = answer.clone();
                move |_| answer.clone()
            })
            .await;
            let started = Instant::now();
            let result = tokio::time::timeout(
                Duration::from_secs(5),
                meta_location(&ZooKeeperRegistry::new(&server), deadline(2000)),
            )
            .await
            .expect("within the deadline");
            let err = result.expect_err("hostile");
            assert!(format!("{err:?}").starts_with(kind), "{kind}: {err:?}");
            assert_eq!(err.znode(), "/hbase/meta-region-server", "{err}");
            assert!(started.elapsed() < Duration::from_millis(3500));
        }
    }

    #[tokio::test]
    async fn a_stale_meta_location_is_read_again_within_the_first_calls_deadline() {
        use std::sync::atomic::{AtomicUsize, Ordering};

        use crate::store::native::{NativeConfig, NativeStore};

        // hbase:meta on a server that is gone.
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let dead = listener.local_addr().expect("address").port();
        drop(listener);
        let meta_reads = Arc::new(AtomicUsize::new(0));
        let reads = meta_reads.clone();
        let zookeeper = fake_zookeeper(false, move |path| match path {
            "/hbase/meta-region-server" => {
                reads.fetch_add(1, Ordering::SeqCst);
                let server = server_name("127.0.0.1", u64::from(dead), 1);
                Answer::Data(znode_data(b"1@h", [1; 8], &bytes_field(1, &server)))
            }
            path => healthy(path),
        })
        .await;
        let config = NativeConfig::zookeeper(&zookeeper).call_timeout(Duration::from_millis(600));
        let store = NativeStore::connect(config)
            .await
            .expect("connect reads ZooKeeper only");
        assert_eq!(store.cluster_id().await.expect("cached"), "cluster-1");
        let started = Instant::now();
        let err = store.locate("t", b"r").await.expect_err("hbase:meta unreachable");
        let elapsed = started.elapsed();
        assert!(elapsed < Duration::from_millis(1500), "{elapsed:?}");
        assert!(err.is_transient(), "{err}");
        // Read at connect, then again after each failed try.
        assert!(
            meta_reads.load(Ordering::SeqCst) >= 3,
            "{}",
            meta_reads.load(Ordering::SeqCst)
        );
    }

    #[tokio::test]
    async fn a_server_that_never_answers_times_out_at_the_deadline() {
        for mute in [true, false] {
            // Mute: no handshake; else no answer to getData.
            let server = fake_zookeeper(mute, |_| Answer::Silence).await;
            let started = Instant::now();
            let err = bootstrap(&ZooKeeperRegistry::new(&server), deadline(300))
                .await
                .expect_err("silence");
            let elapsed = started.elapsed();
            assert!(
                elapsed >= Duration::from_millis(290) && elapsed < Duration::from_millis(1000),
                "{elapsed:?}"
            );
            assert!(
                matches!(&err, ZooKeeperError::Timeout { znode, .. } if znode == "/hbase/hbaseid"),
                "{err}"
            );
        }
        // A deadline already past: no dial at all.
        let err = meta_location(&ZooKeeperRegistry::new("127.0.0.1:1"), Instant::now())
            .await
            .expect_err("past");
        assert!(matches!(err, ZooKeeperError::Timeout { .. }), "{err}");
        let err = meta_location(&ZooKeeperRegistry::new(""), deadline(100))
            .await
            .expect_err("no quorum");
        assert!(matches!(err, ZooKeeperError::NoQuorum { .. }), "{err}");
    }
}
