import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A real HTTP server on 127.0.0.1 (Python's http.server in a subprocess) that answers like
/// verifyReceipt: /production says 21007, /sandbox checks the request and says 0, /slow never
/// answers in time, /broken answers 500. It exits when the test closes its stdin.
///
/// Spawned with posix_spawn rather than Foundation's Process: in Swift 6.3.1 `Process.run()`
/// can read past a buffer while listing /proc/self/fd and crash the whole suite
/// (swift-corelibs-foundation #5472), likelier the more descriptors the tests hold open.
final class FakeVerifyReceiptServer: Sendable {
  private let pid: pid_t
  /// The write end of the child's stdin: closing it ends the script.
  private let stdin: Int32
  let port: Int

  static let script = #"""
    import json, os, sys, threading, time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    # Nothing of the test process's (its sockets, other children's pipes) is kept open here.
    os.closerange(3, 1 << 16)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path == "/slow":
                time.sleep(5)
            if self.path == "/broken":
                self.send_response(500)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            try:
                request = json.loads(body)
                ok = (self.headers.get("Content-Type") == "application/json"
                      and request.get("exclude-old-transactions") is False
                      and request.get("receipt-data") == "QUJD+A==")
            except ValueError:
                ok = False
            if not ok:
                answer = {"status": 21002}
            elif self.path == "/production":
                answer = {"status": 21007}
            else:
                answer = {"status": 0, "environment": "Sandbox", "receipt": {"bundle_id": sys.argv[1], "in_app": [
                    {"product_id": "gold.100", "transaction_id": "7", "original_transaction_id": "7",
                     "purchase_date_ms": "1698148900000", "quantity": "1"}]}}
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    os._exit(0)
    """#

  /// Started on a thread of its own: waiting for the child's port must not hold a thread of
  /// the cooperative pool, which every other test needs.
  static func start(bundleId: String) async throws -> FakeVerifyReceiptServer {
    try await Subprocess.onOwnThread { try FakeVerifyReceiptServer(bundleId: bundleId) }
  }

  private init(bundleId: String) throws {
    var toChild: [Int32] = [-1, -1]
    var fromChild: [Int32] = [-1, -1]
    // Close-on-exec, so no other child spawned meanwhile keeps these ends open (pipe2 is not
    // in Swift's Glibc; the window between pipe and fcntl is a test's, and the script closes
    // whatever it inherits).
    guard pipe(&toChild) == 0 else { throw Self.failed("no pipe") }
    guard pipe(&fromChild) == 0 else {
      toChild.forEach { close($0) }
      throw Self.failed("no pipe")
    }
    for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
    posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
    let argv = ["/usr/bin/env", "python3", "-c", Self.script, bundleId]
    var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    defer { cArguments.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, "/usr/bin/env", &actions, nil, &cArguments, environ)
    close(toChild[0])
    close(fromChild[1])
    defer { close(fromChild[0]) }
    guard spawned == 0 else {
      close(toChild[1])
      throw Self.failed("cannot run python3")
    }
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while line.count < 16, read(fromChild[0], &byte, 1) == 1, byte != UInt8(ascii: "\n") {
      line.append(byte)
    }
    guard let port = Int(String(decoding: line, as: UTF8.self)) else {
      close(toChild[1])
      kill(pid, SIGKILL)
      Self.reap(pid)
      throw Self.failed("fake verifyReceipt server did not start")
    }
    self.pid = pid
    stdin = toChild[1]
    self.port = port
  }

  private static func failed(_ why: String) -> Subprocess.Failed {
    Subprocess.Failed(description: why)
  }

  /// Waits for the child on a thread of its own, so no test waits for a child to exit.
  private static func reap(_ pid: pid_t) {
    Thread.detachNewThread {
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
  }

  func url(_ path: String) -> URL {
    URL(string: "http://127.0.0.1:\(port)\(path)")!
  }

  deinit {
    close(stdin)
    Self.reap(pid)
  }
}
