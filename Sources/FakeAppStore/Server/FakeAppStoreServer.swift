import Foundation
import HTTP
import Synchronization

/// A local stand-in for Apple, for tests and the demo: signs StoreKit 2 transactions and
/// App Store Server Notifications V2 with its own root / intermediate / leaf chain (Apple's
/// OIDs), answers verifyReceipt with Apple's shapes and status codes, and fails on request.
///
/// Only a server configured to trust `rootCertificatePEM` accepts what it signs.
public final class FakeAppStoreServer: Sendable {
  public let configuration: Configuration
  public let authority: FakeCertificateAuthority
  private let apiKey: FakeAPIKey
  /// The routes, runnable in-process with `Router.handle` (no sockets).
  public let router: Router
  private let endpoints: FakeAppStoreEndpoints
  private let http: HTTPServer
  private let boundPort = Mutex<Int?>(nil)

  /// Makes a fresh certificate chain; throws when OpenSSL cannot.
  public init(configuration: Configuration = .init()) throws {
    self.configuration = configuration
    authority = try FakeCertificateAuthority(options: configuration.certificateOptions)
    apiKey = try FakeAPIKey(keyId: configuration.apiKeyId, issuerId: configuration.apiIssuerId)
    endpoints = FakeAppStoreEndpoints(
      configuration: configuration, authority: authority, apiKey: apiKey)
    router = endpoints.router()
    var server = ServerConfiguration()
    server.host = configuration.host
    server.port = configuration.port
    server.eventLoopCount = configuration.eventLoopCount
    server.shutdownGracePeriod = configuration.shutdownGracePeriod
    http = HTTPServer(configuration: server, router: router, logger: configuration.logger)
  }

  /// The PEM of the fake root: what a server under test must be told to trust.
  public var rootCertificatePEM: String { authority.rootCertificatePEM }

  /// The in-app purchase key (`.p8` PEM) the fake's App Store Server API accepts tokens of,
  /// with `configuration.apiKeyId` and `configuration.apiIssuerId`.
  public var apiPrivateKeyPEM: String { apiKey.privateKeyPEM }

  /// Binds and serves; returns the port (a free one when configured with 0).
  @discardableResult
  public func start() throws -> Int {
    let port = try http.start()
    boundPort.withLock { $0 = port }
    return port
  }

  /// Releases held answers and drops pending notification retries, then stops the HTTP server (in-flight requests may finish).
  public func shutdown() async {
    endpoints.hold.releaseAll()
    endpoints.outbox.close()
    await http.shutdown()
  }

  /// The bound port once started.
  public var port: Int? { boundPort.withLock { $0 } }

  /// `http://host:port`, once started.
  public var baseURL: URL? {
    guard let port else { return nil }
    let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
    return URL(string: "http://\(host):\(port)")
  }

  /// Production verifyReceipt (`/verifyReceipt`), once started.
  public var verifyReceiptURL: URL? { baseURL?.appendingPathComponent("verifyReceipt") }

  /// Sandbox verifyReceipt (`/sandbox/verifyReceipt`), once started.
  public var sandboxVerifyReceiptURL: URL? {
    baseURL?.appendingPathComponent("sandbox").appendingPathComponent("verifyReceipt")
  }
}
