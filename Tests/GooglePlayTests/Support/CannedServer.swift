import Foundation
import HTTP
import StorekeeperLogging

/// A loopback HTTP server (the project's own) answering every request with one canned
/// response, for the client's handling of each status.
struct CannedServer: Sendable {
  let server: HTTPServer
  let base: URL

  static func with<T: Sendable>(
    _ answer: @escaping @Sendable (Request) async -> Response,
    _ body: (URL) async throws -> T
  ) async throws -> T {
    var router = Router()
    for method in [HTTPMethod.get, .post] {
      router.add(method, "/token") { _, _ in
        Response(
          headers: ["Content-Type": "application/json"],
          body: Array(#"{"access_token":"canned","expires_in":3600,"token_type":"Bearer"}"#.utf8))
      }
      router.add(method, "/androidpublisher/v3/applications/{p}/purchases/products/{id}/tokens/{t}")
      { request, _ in await answer(request) }
      router.add(
        method, "/androidpublisher/v3/applications/{p}/purchases/subscriptionsv2/tokens/{t}"
      ) { request, _ in await answer(request) }
    }
    var configuration = ServerConfiguration()
    configuration.host = "127.0.0.1"
    configuration.port = 0
    let server = HTTPServer(
      configuration: configuration, router: router,
      logger: Logger(label: "canned", level: .error))
    let port = try server.start()
    guard let base = URL(string: "http://127.0.0.1:\(port)") else {
      throw CocoaError(.fileNoSuchFile)
    }
    do {
      let result = try await body(base)
      await server.shutdown()
      return result
    } catch {
      await server.shutdown()
      throw error
    }
  }
}
