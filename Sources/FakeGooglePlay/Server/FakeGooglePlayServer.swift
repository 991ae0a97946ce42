import Foundation
import HTTP
import Synchronization

/// A local stand-in for Google Play, for tests and the demo: issues a service account key
/// file whose `token_uri` is its own `/token`, checks JWT-bearer assertions, serves the
/// Android Publisher purchase calls with the Discovery document's shapes, lets tests make and
/// change purchases on a clock they control, and pushes RTDN with OIDC tokens it signs.
///
/// Only a server configured with its key file and its JWKS URL trusts what it says.
public final class FakeGooglePlayServer: Sendable {
  public let configuration: Configuration
  /// The routes, runnable in-process with `Router.handle`.
  public let router: Router
  let endpoints: FakeGooglePlayEndpoints
  private let http: HTTPServer
  private let boundPort = Mutex<Int?>(nil)

  public init(configuration: Configuration = .init()) throws {
    self.configuration = configuration
    endpoints = try FakeGooglePlayEndpoints(configuration: configuration)
    router = endpoints.router()
    var server = ServerConfiguration()
    server.host = configuration.host
    server.port = configuration.port
    server.eventLoopCount = configuration.eventLoopCount
    server.shutdownGracePeriod = configuration.shutdownGracePeriod
    http = HTTPServer(configuration: server, router: router, logger: configuration.logger)
  }

  /// Binds and serves; returns the port.
  @discardableResult
  public func start() throws -> Int {
    let port = try http.start()
    boundPort.withLock { $0 = port }
    endpoints.origin.withLock { $0 = baseURL?.absoluteString ?? "" }
    return port
  }

  public func shutdown() async {
    endpoints.outbox.close()
    await http.shutdown()
  }

  public var port: Int? { boundPort.withLock { $0 } }

  /// `http://host:port`, once started: the API's base URL.
  public var baseURL: URL? {
    guard let port else { return nil }
    let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
    return URL(string: "http://\(host):\(port)")
  }

  /// The JWKS of the push tokens, once started.
  public var jwksURL: URL? { baseURL?.appendingPathComponent("oauth2/v3/certs") }

  /// The service account key file (JSON) a client uses against this fake, once started: its
  /// `token_uri` is the fake's `/token`.
  public func serviceAccountKeyJSON() throws -> [UInt8] {
    guard let base = baseURL else { throw FakeCryptoError("the fake is not started") }
    return try endpoints.serviceAccount.keyFile(tokenURI: base.absoluteString + "/token")
  }
}
