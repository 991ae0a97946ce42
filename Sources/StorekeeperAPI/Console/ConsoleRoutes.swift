import Foundation
import HTTP

/// Serves the admin console at `/admin/`: `index.html` there, every other file at
/// `/admin/<name>`. Each answer carries `ConsoleFile.securityHeaders`; the console itself
/// holds no data and reaches the server only through the admin API with the admin's token.
package struct ConsoleRoutes: Sendable {
  let assets: ConsoleAssets

  package init(assets: ConsoleAssets) {
    self.assets = assets
  }

  package func register(_ router: inout APIRouter) {
    router.addImmediate(.get, "/admin") { _, _ in
      var headers = HTTPHeaders(ConsoleFile.securityHeaders)
      headers.add("Location", "/admin/")
      return Response(status: 308, headers: headers)
    }
    for file in assets.files {
      let path = file.name == "index.html" ? "/admin/" : "/admin/" + file.name
      router.addImmediate(.get, path) { request, _ in Self.answer(file, request) }
    }
  }

  /// Whether a route pattern is one of the console's (pages, not the admin API).
  static func isConsolePath(_ pattern: String) -> Bool {
    pattern == "/admin" || (pattern.hasPrefix("/admin/") && !pattern.hasPrefix("/admin/v1/"))
  }

  static func answer(_ file: ConsoleFile, _ request: Request) -> Response {
    var headers = HTTPHeaders(ConsoleFile.securityHeaders)
    headers.add("ETag", file.etag)
    // The weak comparison, as the catalog's (a proxy may have weakened the tag).
    if request.headers.values("If-None-Match").contains(where: {
      CatalogRoutes.matches($0, file.etag)
    }) {
      return Response(status: 304, headers: headers)
    }
    headers.add("Content-Type", file.contentType)
    return Response(status: 200, headers: headers, body: file.body)
  }
}
