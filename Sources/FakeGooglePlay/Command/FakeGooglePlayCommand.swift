import Foundation
import HTTP

#if canImport(Glibc)
  import Glibc
#endif

/// `storekeeper-fake-googleplay --port N --key-out FILE [options]` (see the usage).
///
/// Makes a fresh service account key, serves, writes the key file (its `token_uri` the fake's
/// own `/token`) to FILE once the port is known, prints exactly one line
/// `fake-googleplay listening on <host>:<port>` on stdout once ready, and exits 0 on SIGTERM
/// or SIGINT. Logs go to stderr.
public enum FakeGooglePlayCommand {
  public static func run(_ arguments: [String]) async -> Int32 {
    let options: FakeGooglePlayArguments
    do {
      options = try FakeGooglePlayArguments(arguments)
    } catch {
      switch error {
      case .help:
        FileHandle.standardOutput.write(Data((FakeGooglePlayArguments.usage + "\n").utf8))
        return 0
      case .message(let message):
        FileHandle.standardError.write(
          Data("fake-googleplay: \(message)\n\(FakeGooglePlayArguments.usage)\n".utf8))
        return 2
      }
    }
    let trap = SignalTrap([SIGTERM, SIGINT])
    let server: FakeGooglePlayServer
    let port: Int
    do {
      server = try FakeGooglePlayServer(configuration: options.configuration)
      port = try server.start()
      try Data(server.serviceAccountKeyJSON()).write(
        to: URL(fileURLWithPath: options.keyOut), options: .atomic)
    } catch {
      FileHandle.standardError.write(Data("fake-googleplay: cannot start: \(error)\n".utf8))
      return 1
    }
    options.configuration.logger.warning(
      "fake Google Play running: its key file and push tokens are trusted only by servers told to",
      [
        "key_file": .string(options.keyOut),
        "push_url": .string(options.configuration.pushURL?.absoluteString ?? "none"),
        "package_name": .string(options.configuration.packageName),
      ])
    FileHandle.standardOutput.write(
      Data("fake-googleplay listening on \(options.configuration.host):\(port)\n".utf8))
    let signal = await trap.wait()
    options.configuration.logger.notice("stopping", ["signal": .int(Int(signal))])
    await server.shutdown()
    return 0
  }
}
