import Foundation
import StorekeeperLogging

/// The options of `storekeeper-fake-appstore`.
struct FakeAppStoreArguments: Sendable {
  static let usage = """
    usage: storekeeper-fake-appstore --port N --root-cert-out FILE [--notify-url URL]
                                     [--host 127.0.0.1] [--app-apple-id N]
                                     [--shared-secret S] [--log-level LEVEL]
                                     [--retry-schedule SECONDS,...|none]
                                     [--api-key-out FILE] [--api-key-id ID]
                                     [--api-issuer-id ID]
    """

  var configuration = FakeAppStoreServer.Configuration()
  var rootCertificateOut = ""
  /// Where to write the in-app purchase key (`.p8`) the fake's Server API accepts.
  var apiKeyOut: String?

  /// Accepts `--name value` and `--name=value`; throws a one-line message for the user.
  init(_ arguments: [String]) throws(FakeAppStoreArgumentError) {
    var remaining = arguments[...]
    var sawPort = false
    while let argument = remaining.popFirst() {
      var name = argument
      var value: String?
      if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
        name = String(argument[..<equals])
        value = String(argument[argument.index(after: equals)...])
      }
      if name == "--help" || name == "-h" { throw .help }
      guard let text = value ?? remaining.popFirst() else {
        throw .message("\(name) needs a value")
      }
      switch name {
      case "--port":
        guard let port = Int(text), (0...65_535).contains(port) else {
          throw .message("--port must be 0 to 65535")
        }
        configuration.port = port
        sawPort = true
      case "--root-cert-out": rootCertificateOut = text
      case "--notify-url":
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased()),
          url.host != nil
        else { throw .message("--notify-url must be an http(s) URL") }
        configuration.notifyURL = url
      case "--host":
        // A signer that servers may be told to trust stays off the network.
        guard text.hasPrefix("127.") || text == "::1" else {
          throw .message("--host must be a loopback address (127.x.x.x or ::1)")
        }
        configuration.host = text
      case "--app-apple-id":
        guard let id = Int64(text), id > 0 else {
          throw .message("--app-apple-id must be a positive integer")
        }
        configuration.appAppleId = id
      case "--shared-secret": configuration.sharedSecret = text
      case "--api-key-out": apiKeyOut = text
      case "--api-key-id":
        guard !text.isEmpty else { throw .message("--api-key-id must not be empty") }
        configuration.apiKeyId = text
      case "--api-issuer-id":
        guard !text.isEmpty else { throw .message("--api-issuer-id must not be empty") }
        configuration.apiIssuerId = text
      case "--retry-schedule":
        configuration.retrySchedule = try Self.retrySchedule(text)
      case "--log-level":
        guard let level = LogLevel(name: text) else { throw .message("--log-level is unknown") }
        configuration.logger.level = level
      default: throw .message("unknown option \(name)")
      }
    }
    guard sawPort else { throw .message("--port is required (0 picks a free port)") }
    guard !rootCertificateOut.isEmpty else { throw .message("--root-cert-out is required") }
  }

  /// `none`, or up to 10 delays in seconds (decimals allowed) such as `1,12,24`.
  private static func retrySchedule(_ text: String) throws(FakeAppStoreArgumentError) -> [Duration]
  {
    if text == "none" { return [] }
    let parts = text.split(separator: ",", omittingEmptySubsequences: false)
    let seconds = parts.compactMap { Double($0) }.filter { $0.isFinite && $0 >= 0 && $0 <= 604_800 }
    guard !parts.isEmpty, parts.count <= 10, seconds.count == parts.count else {
      throw .message("--retry-schedule must be none or up to 10 delays in seconds, such as 1,12,24")
    }
    return seconds.map { .milliseconds(Int64(($0 * 1000).rounded())) }
  }
}

enum FakeAppStoreArgumentError: Error, Sendable {
  case help
  case message(String)
}
