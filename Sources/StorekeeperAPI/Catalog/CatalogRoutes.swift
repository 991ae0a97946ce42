import HTTP

/// The catalog for apps, served from memory on the event loop (no database, no task hop), in
/// the storefront the request names (`StorefrontRequest`), as JSON or, for seed 000's client, as
/// XML; every form is encoded once per catalog change.
package struct CatalogRoutes: Sendable {
  let cache: ServedCatalog

  package init(cache: ServedCatalog) {
    self.cache = cache
  }

  package func register(_ router: inout APIRouter) {
    router.addImmediate(.get, "/v1/products") { request, _ in
      // The storefront first, whatever the format: a typo is 400 in XML as in JSON.
      let storefront = try StorefrontRequest.storefront(request)
      if ResponseFormat.preferred(request.headers["Accept"]) == .xml {
        return Self.serve(cache.xmlList(storefront: storefront), request)
      }
      return Self.serve(cache.list(storefront: storefront), request)
    }
    // Seed 000's client fetches its shop from a fixed URL ending in `.xml`.
    router.addImmediate(.get, "/v1/products.xml") { request, _ in
      Self.serve(cache.xmlList(storefront: try StorefrontRequest.storefront(request)), request)
    }
    router.addImmediate(.get, "/v1/products/{product_id}") { request, context in
      let id = context.parameters["product_id"] ?? ""
      guard let entry = cache.entry(id, storefront: try StorefrontRequest.storefront(request))
      else {
        throw HTTPError(404, code: "product_not_found", detail: "no product \(id) is for sale")
      }
      return Self.serve(entry, request)
    }
  }

  static func serve(_ entry: CatalogSnapshot.Entry, _ request: Request) -> Response {
    if let tags = request.headers["If-None-Match"], matches(tags, entry.etag) {
      return Response(status: 304, headers: entry.notModifiedHeaders)
    }
    return Response(status: 200, headers: entry.headers, body: entry.body)
  }

  /// `If-None-Match` uses the weak comparison (RFC 9110 §13.1.2).
  static func matches(_ header: String, _ etag: String) -> Bool {
    for candidate in header.split(separator: ",") {
      var tag = candidate.drop(while: { $0 == " " })
      // removeLast, not `tag = tag.dropLast()`: that counts the substring each time, so a
      // candidate padded with 16 KiB of spaces cost seconds of CPU.
      while tag.last == " " { tag.removeLast() }
      if tag == "*" { return true }
      if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
      if tag == etag { return true }
    }
    return false
  }
}
