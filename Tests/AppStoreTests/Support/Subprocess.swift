import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Runs a command line tool in tests and returns its standard output.
enum Subprocess {
  struct Failed: Error, CustomStringConvertible {
    var description: String
  }

  /// Runs on a thread of its own, so the wait never holds one of the cooperative pool's few
  /// threads (two on two cores: two suites waiting for a tool would stall every other test).
  @discardableResult
  static func run(_ arguments: [String], in directory: URL, input: Data? = nil) async throws
    -> Data
  {
    try await onOwnThread { try runBlocking(arguments, in: directory, input: input) }
  }

  /// Blocking work (a child's output, its exit) away from the cooperative pool.
  static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws
    -> T
  {
    try await withCheckedThrowingContinuation { continuation in
      Thread { continuation.resume(with: Result { try body() }) }.start()
    }
  }

  /// posix_spawn + waitpid rather than Foundation's Process, whose `waitUntilExit` can hang
  /// on Linux while the suite keeps Dispatch's threads busy. Input and output go through files.
  private static func runBlocking(_ arguments: [String], in directory: URL, input: Data?) throws
    -> Data
  {
    let id = UUID().uuidString
    let files = ["in", "out", "err"].map { directory.appendingPathComponent(".\($0)-\(id)").path }
    defer { files.forEach { try? FileManager.default.removeItem(atPath: $0) } }
    try (input ?? Data()).write(to: URL(fileURLWithPath: files[0]))
    let script = #"cd "$1" && exec 0<"$2" 1>"$3" 2>"$4" && shift 4 && exec /usr/bin/env "$@""#
    let argv = ["/bin/sh", "-c", script, "sh", directory.path] + files + arguments
    var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    defer { cArguments.forEach { free($0) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, "/bin/sh", nil, nil, &cArguments, environ) == 0 else {
      throw Failed(description: "cannot run /bin/sh")
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let output = FileManager.default.contents(atPath: files[1]) ?? Data()
    guard status == 0 else {
      let message = FileManager.default.contents(atPath: files[2]) ?? Data()
      throw Failed(
        description:
          "\(arguments.joined(separator: " ")): \(String(decoding: message, as: UTF8.self))")
    }
    return output
  }

  static func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "appstore-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }
}
