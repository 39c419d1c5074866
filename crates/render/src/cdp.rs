//! The DevTools protocol over Chromium's debugging pipe
//! (`--remote-debugging-pipe`): JSON messages, each ended by a NUL byte,
//! written to the browser's fd 3 and read from its fd 4. A pipe, not a
//! port: no other process on the machine can drive the browser.
//!
//! One reader task routes each message: a reply to the call waiting for
//! its id, an event to the channel of its session (one per rendered page).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::sync::{mpsc, oneshot};

/// An event of one session.
#[derive(Debug)]
pub(crate) struct Event {
    pub method: String,
    pub params: Value,
}

/// Why a call got no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CallError {
    /// The browser answered with an error.
    Refused(String),
    /// The pipe closed: the browser is gone.
    Closed,
}

type Reply = Result<Value, CallError>;

/// A connection to one browser process (clones share it).
#[derive(Debug, Clone)]
pub(crate) struct Connection {
    out: mpsc::UnboundedSender<Vec<u8>>,
    next_id: Arc<AtomicU64>,
    routes: Arc<Mutex<Routes>>,
}

#[derive(Debug, Default)]
struct Routes {
    calls: HashMap<u64, oneshot::Sender<Reply>>,
    sessions: HashMap<String, mpsc::UnboundedSender<Event>>,
    closed: bool,
}

impl Connection {
    /// Starts the reader and writer tasks on the browser's pipes.
    pub fn start(from_browser: pipe::Receiver, to_browser: pipe::Sender) -> Connection {
        let routes = Arc::new(Mutex::new(Routes::default()));
        let (out, queue) = mpsc::unbounded_channel();
        tokio::spawn(write_messages(to_browser, queue));
        tokio::spawn(read_messages(from_browser, routes.clone()));
        Connection {
            out,
            next_id: Arc::new(AtomicU64::new(1)),
            routes,
        }
    }

    /// Whether the browser's end is gone.
    pub fn is_closed(&self) -> bool {
        self.routes.lock().unwrap().closed
    }

    /// Calls `method`, on a page's session or on the browser, and waits
    /// for its result.
    pub async fn call(&self, session: Option<&str>, method: &str, params: Value) -> Reply {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut routes = self.routes.lock().unwrap();
            if routes.closed {
                return Err(CallError::Closed);
            }
            routes.calls.insert(id, tx);
        }
        self.write(id, session, method, params);
        rx.await.unwrap_or(Err(CallError::Closed))
    }

    /// Sends `method` without waiting for its result (answers to paused
    /// requests: an error there means the page is gone, which its own
    /// events say).
    pub fn send(&self, session: &str, method: &str, params: Value) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.write(id, Some(session), method, params);
    }

    fn write(&self, id: u64, session: Option<&str>, method: &str, params: Value) {
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            message["sessionId"] = Value::from(s);
        }
        let mut bytes = serde_json::to_vec(&message).expect("a JSON value serializes");
        bytes.push(0);
        // A closed writer is seen by the reader too: the call then fails.
        let _ = self.out.send(bytes);
    }

    /// The events of `session` from now on.
    pub fn subscribe(&self, session: &str) -> mpsc::UnboundedReceiver<Event> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut routes = self.routes.lock().unwrap();
        if !routes.closed {
            routes.sessions.insert(session.to_string(), tx);
        }
        rx
    }

    pub fn unsubscribe(&self, session: &str) {
        self.routes.lock().unwrap().sessions.remove(session);
    }
}

async fn write_messages(mut pipe: pipe::Sender, mut queue: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(message) = queue.recv().await {
        if pipe.write_all(&message).await.is_err() {
            return;
        }
    }
}

async fn read_messages(mut pipe: pipe::Receiver, routes: Arc<Mutex<Routes>>) {
    let mut buffer = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let scanned = buffer.len();
        buffer.extend_from_slice(&chunk[..n]);
        let mut start = 0;
        let mut from = scanned;
        while let Some(end) = buffer[from..].iter().position(|&b| b == 0) {
            let end = from + end;
            route(&buffer[start..end], &routes);
            start = end + 1;
            from = start;
        }
        buffer.drain(..start);
    }
    let mut routes = routes.lock().unwrap();
    routes.closed = true;
    // Dropping the senders ends every waiting call and session.
    routes.calls.clear();
    routes.sessions.clear();
}

/// Hands one message to whoever waits for it.
fn route(message: &[u8], routes: &Mutex<Routes>) {
    let Ok(mut message) = serde_json::from_slice::<Value>(message) else {
        tracing::debug!("the browser sent a message that is not JSON");
        return;
    };
    let mut routes = routes.lock().unwrap();
    if let Some(id) = message.get("id").and_then(Value::as_u64) {
        if let Some(caller) = routes.calls.remove(&id) {
            let reply = match message.get_mut("error") {
                Some(e) => Err(CallError::Refused(
                    e["message"].as_str().unwrap_or("").into(),
                )),
                None => Ok(message["result"].take()),
            };
            let _ = caller.send(reply);
        }
        return;
    }
    let session = message.get("sessionId").and_then(Value::as_str);
    if let Some(events) = session.and_then(|s| routes.sessions.get(s)) {
        let method = message["method"].as_str().unwrap_or("").to_string();
        let _ = events.send(Event {
            method,
            params: message["params"].take(),
        });
    }
}
