import Foundation

/// A real HTTP server on 127.0.0.1 (Python's http.server in a subprocess) that answers like
/// verifyReceipt: /production says 21007, /sandbox checks the request and says 0, /slow never
/// answers in time, /broken answers 500. It exits when the test closes its stdin.
/// Immutable once started (`@unchecked`: Process and Pipe are not marked Sendable).
final class FakeVerifyReceiptServer: @unchecked Sendable {
  let process = Process()
  private let stdin = Pipe()
  let port: Int

  static let script = #"""
    import json, os, sys, threading, time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", Self.script, bundleId]
    let output = Pipe()
    process.standardOutput = output
    process.standardInput = stdin
    try process.run()
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      line.append(chunk)
    }
    guard
      let port = Int(
        String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    else {
      process.terminate()
      throw Subprocess.Failed(description: "fake verifyReceipt server did not start")
    }
    self.port = port
  }

  func url(_ path: String) -> URL {
    URL(string: "http://127.0.0.1:\(port)\(path)")!
  }

  deinit {
    // Closing stdin ends the script. No waitUntilExit: on Linux it can hang forever when many
    // threads are busy (seen in the full suite); Foundation reaps the child on its own.
    try? stdin.fileHandleForWriting.close()
  }
}
