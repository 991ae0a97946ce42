import Foundation
import HTTP

#if canImport(Glibc)
  import Glibc
#endif

/// `storekeeper-fake-appstore --port N --root-cert-out FILE [--notify-url URL] [--host H]
/// [--app-apple-id N] [--shared-secret S] [--log-level L] [--retry-schedule S,...|none]
/// [--api-key-out FILE] [--api-key-id ID] [--api-issuer-id ID]`.
///
/// Makes a fresh chain, writes its root PEM to FILE, serves, prints exactly one line
/// `fake-appstore listening on <host>:<port>` on stdout once ready, and exits 0 on SIGTERM or
/// SIGINT. Logs go to stderr.
public enum FakeAppStoreCommand {
  public static func run(_ arguments: [String]) async -> Int32 {
    let options: FakeAppStoreArguments
    do {
      options = try FakeAppStoreArguments(arguments)
    } catch {
      switch error {
      case .help:
        FileHandle.standardOutput.write(Data((FakeAppStoreArguments.usage + "\n").utf8))
        return 0
      case .message(let message):
        FileHandle.standardError.write(
          Data("fake-appstore: \(message)\n\(FakeAppStoreArguments.usage)\n".utf8))
        return 2
      }
    }
    let trap = SignalTrap([SIGTERM, SIGINT])
    let server: FakeAppStoreServer
    let port: Int
    do {
      server = try FakeAppStoreServer(configuration: options.configuration)
      try Data(server.rootCertificatePEM.utf8).write(
        to: URL(fileURLWithPath: options.rootCertificateOut), options: .atomic)
      if let apiKeyOut = options.apiKeyOut {
        try Data(server.apiPrivateKeyPEM.utf8).write(
          to: URL(fileURLWithPath: apiKeyOut), options: .atomic)
      }
      port = try server.start()
    } catch {
      FileHandle.standardError.write(Data("fake-appstore: cannot start: \(error)\n".utf8))
      return 1
    }
    options.configuration.logger.warning(
      "fake App Store running: its root is trusted only by servers told to trust it",
      [
        "root_certificate": .string(options.rootCertificateOut),
        "notify_url": .string(options.configuration.notifyURL?.absoluteString ?? "none"),
      ])
    // FileHandle writes straight to the descriptor: the line is out before anything else runs.
    FileHandle.standardOutput.write(
      Data("fake-appstore listening on \(options.configuration.host):\(port)\n".utf8))
    let signal = await trap.wait()
    options.configuration.logger.notice("stopping", ["signal": .int(Int(signal))])
    await server.shutdown()
    return 0
  }
}
