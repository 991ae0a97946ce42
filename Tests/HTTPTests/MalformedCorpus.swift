@testable import HTTP

/// Malformed requests and the status each must get. The limits are small so size cases stay
/// short; the live tests configure the server with the same ones.
enum MalformedCorpus {
  static let limits = ParserLimits(
    maxHeadBytes: 1024, maxHeaderCount: 10, maxTargetBytes: 256, maxBodyBytes: 1024)

  struct Case: CustomStringConvertible {
    var name: String
    var bytes: [UInt8]
    var status: Int
    var description: String { name }
  }

  private static func c(_ name: String, _ text: String, _ status: Int) -> Case {
    Case(name: name, bytes: Array(text.utf8), status: status)
  }

  private static let ok = "GET / HTTP/1.1\r\nHost: a\r\n"

  static let cases: [Case] = [
    c("bare LF everywhere", "GET / HTTP/1.1\nHost: a\n\n", 400),
    c("bare LF after a header", "GET / HTTP/1.1\r\nHost: a\n\r\n", 400),
    c("bare LF after the request line", "GET / HTTP/1.1\nHost: a\r\n\r\n", 400),
    c("bare CR inside a value", ok + "X: a\rb\r\n\r\n", 400),
    c("CR CR LF line ending", ok + "X: a\r\r\n\r\n", 400),
    c("obs-fold continuation line", ok + "X: a\r\n b\r\n\r\n", 400),
    c("obs-fold with tab", ok + "X: a\r\n\tb\r\n\r\n", 400),
    c("space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
    c("tab before colon", ok + "X\t: a\r\n\r\n", 400),
    c("control char in value", ok + "X: a\u{01}b\r\n\r\n", 400),
    c("NUL in value", ok + "X: a\u{00}b\r\n\r\n", 400),
    c("DEL in value", ok + "X: a\u{7F}b\r\n\r\n", 400),
    c("parenthesis in name", ok + "X(y): 1\r\n\r\n", 400),
    c("slash in name", ok + "X/y: 1\r\n\r\n", 400),
    c("empty name", ok + ": x\r\n\r\n", 400),
    c("no colon", ok + "Nonsense\r\n\r\n", 400),
    c("missing Host in 1.1", "GET / HTTP/1.1\r\nX: 1\r\n\r\n", 400),
    c("duplicate Host in 1.1", ok + "Host: b\r\n\r\n", 400),
    c("duplicate Host in 1.0", "GET / HTTP/1.0\r\nHost: a\r\nhost: b\r\n\r\n", 400),
    c(
      "Content-Length with Transfer-Encoding",
      ok + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
    c(
      "differing Content-Length headers", ok + "Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
      400),
    c("differing Content-Length list", ok + "Content-Length: 3, 4\r\n\r\nabcd", 400),
    c("alphabetic Content-Length", ok + "Content-Length: abc\r\n\r\n", 400),
    c("negative Content-Length", ok + "Content-Length: -1\r\n\r\n", 400),
    c("signed Content-Length", ok + "Content-Length: +5\r\n\r\nhello", 400),
    c("empty Content-Length", ok + "Content-Length:\r\n\r\n", 400),
    c("hex Content-Length", ok + "Content-Length: 0x10\r\n\r\n", 400),
    c("Content-Length over the limit", ok + "Content-Length: 2048\r\n\r\n", 413),
    c(
      "Content-Length beyond any integer",
      ok + "Content-Length: 99999999999999999999999999\r\n\r\n", 413),
    c("gzip transfer coding", ok + "Transfer-Encoding: gzip\r\n\r\n", 501),
    c("gzip then chunked", ok + "Transfer-Encoding: gzip, chunked\r\n\r\n", 501),
    c("chunked twice", ok + "Transfer-Encoding: chunked, chunked\r\n\r\n", 400),
    c(
      "Transfer-Encoding in 1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      400),
    c("empty Transfer-Encoding", ok + "Transfer-Encoding: \r\n\r\n", 400),
    // Any token is a method (the router answers 405 or 404); CONNECT's host:port is no path.
    c("CONNECT authority-form", "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n", 400),
    c("authority-form with GET", "GET a:443 HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    c("invalid char in method", "GE(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    Case(name: "TLS ClientHello", bytes: [0x16, 0x03, 0x01, 0x00, 0xC8, 0x01], status: 400),
    c("NUL before the request line", "\r\n\u{00}GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    c("HTTP/2.0", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
    c("HTTP/1.2", "GET / HTTP/1.2\r\nHost: a\r\n\r\n", 505),
    c("HTTP/0.9 version", "GET / HTTP/0.9\r\nHost: a\r\n\r\n", 505),
    c("garbage protocol name", "GET / HTTX/1.1\r\nHost: a\r\n\r\n", 400),
    c("two-digit minor version", "GET / HTTP/1.10\r\nHost: a\r\n\r\n", 400),
    c("lowercase protocol name", "GET / http/1.1\r\nHost: a\r\n\r\n", 400),
    c("no version", "GET /\r\nHost: a\r\n\r\n", 400),
    c("double space before target", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    c("space inside target", "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    c("leading space", " GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    c("relative target", "GET foo HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    c("asterisk with GET", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    c("non-ASCII target", "GET /caf\u{E9} HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    c(
      "target over the limit",
      "GET /" + String(repeating: "a", count: 300) + " HTTP/1.1\r\nHost: a\r\n\r\n", 414),
    c("target over the limit, line unfinished", "GET /" + String(repeating: "a", count: 300), 414),
    c("head over the limit", ok + "X: " + String(repeating: "b", count: 1100) + "\r\n\r\n", 431),
    c("head over the limit, unfinished", ok + "X: " + String(repeating: "b", count: 1100), 431),
    c("too many header fields", ok + (1...10).map { "X-\($0): v\r\n" }.joined() + "\r\n", 431),
    c("invalid chunk size", ok + "Transfer-Encoding: chunked\r\n\r\nzz\r\nhi\r\n0\r\n\r\n", 400),
    c(
      "chunk without CRLF after data", ok + "Transfer-Encoding: chunked\r\n\r\n2\r\nhiXX0\r\n\r\n",
      400),
    c("chunk size with bare LF", ok + "Transfer-Encoding: chunked\r\n\r\n2\nhi\r\n0\r\n\r\n", 400),
    c("chunk over the body limit", ok + "Transfer-Encoding: chunked\r\n\r\n801\r\n", 413),
    c(
      "chunks adding up over the limit",
      ok + "Transfer-Encoding: chunked\r\n\r\n"
        + String(repeating: "100\r\n" + String(repeating: "x", count: 256) + "\r\n", count: 5), 413),
    c(
      "control char in chunk extension",
      ok + "Transfer-Encoding: chunked\r\n\r\n2;a=\u{01}\r\nhi\r\n0\r\n\r\n", 400),
    c("obs-fold in trailer", ok + "Transfer-Encoding: chunked\r\n\r\n0\r\nX: a\r\n b\r\n\r\n", 400),
    c(
      "space before colon in trailer", ok + "Transfer-Encoding: chunked\r\n\r\n0\r\nX : a\r\n\r\n",
      400),
  ]
}
