import Foundation
import StorekeeperLogging

/// The options of `storekeeper-fake-googleplay`.
struct FakeGooglePlayArguments: Sendable {
  static let usage = """
    usage: storekeeper-fake-googleplay --port N --key-out FILE [--host 127.0.0.1]
                                       [--package-name NAME] [--client-email EMAIL]
                                       [--push-url URL] [--push-audience AUD]
                                       [--push-email EMAIL] [--push-min-backoff SECONDS]
                                       [--push-max-backoff SECONDS] [--push-retry-for SECONDS]
                                       [--voided-page-size N] [--log-level LEVEL]
    """

  var configuration = FakeGooglePlayServer.Configuration()
  /// Where the service account key file is written (its `token_uri` is the fake's).
  var keyOut = ""

  /// Accepts `--name value` and `--name=value`; throws a one-line message for the user.
  init(_ arguments: [String]) throws(FakeGooglePlayArgumentError) {
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
      case "--key-out": keyOut = text
      case "--host":
        // A token issuer that servers may be told to trust stays off the network.
        guard text.hasPrefix("127.") || text == "::1" else {
          throw .message("--host must be a loopback address (127.x.x.x or ::1)")
        }
        configuration.host = text
      case "--package-name":
        guard !text.isEmpty,
          text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_") })
        else { throw .message("--package-name must be a package name such as com.example.app") }
        configuration.packageName = text
      case "--client-email":
        guard text.contains("@") else { throw .message("--client-email must be an email") }
        configuration.clientEmail = text
      case "--push-url":
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased()),
          url.host != nil
        else { throw .message("--push-url must be an http(s) URL") }
        configuration.pushURL = url
      case "--push-audience":
        guard !text.isEmpty else { throw .message("--push-audience must not be empty") }
        configuration.pushAudience = text
      case "--push-email":
        guard text.contains("@") else { throw .message("--push-email must be an email") }
        configuration.pushEmail = text
      case "--push-min-backoff": configuration.pushMinBackoff = try Self.seconds(name, text)
      case "--push-max-backoff": configuration.pushMaxBackoff = try Self.seconds(name, text)
      case "--push-retry-for": configuration.pushRetention = try Self.seconds(name, text)
      case "--voided-page-size":
        guard let size = Int(text), (1...1000).contains(size) else {
          throw .message("--voided-page-size must be 1 to 1000")
        }
        configuration.voidedPageSize = size
      case "--log-level":
        guard let level = LogLevel(name: text) else { throw .message("--log-level is unknown") }
        configuration.logger.level = level
      default: throw .message("unknown option \(name)")
      }
    }
    guard sawPort else { throw .message("--port is required (0 picks a free port)") }
    guard !keyOut.isEmpty else { throw .message("--key-out is required") }
    guard configuration.pushMinBackoff <= configuration.pushMaxBackoff else {
      throw .message("--push-min-backoff must not exceed --push-max-backoff")
    }
  }

  private static func seconds(_ name: String, _ text: String) throws(FakeGooglePlayArgumentError)
    -> Duration
  {
    guard let seconds = Double(text), seconds.isFinite, seconds >= 0, seconds <= 30 * 86_400 else {
      throw .message("\(name) must be seconds from 0 to 2592000")
    }
    return .milliseconds(Int64((seconds * 1000).rounded()))
  }
}

enum FakeGooglePlayArgumentError: Error, Sendable {
  case help
  case message(String)
}
