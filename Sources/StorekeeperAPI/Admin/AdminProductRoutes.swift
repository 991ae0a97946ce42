import HTTP
import StorekeeperCore

/// `/admin/v1/products…`: the catalog as admins edit it.
package struct AdminProductRoutes: Sendable {
  let auth: AdminAuthenticator
  let repository: CatalogRepository
  let cache: ServedCatalog

  package init(auth: AdminAuthenticator, repository: CatalogRepository, cache: ServedCatalog) {
    self.auth = auth
    self.repository = repository
    self.cache = cache
  }

  package func register(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/products") { request, context in
      _ = try auth.authenticate(request, context)
      struct List: Encodable { var products: [Product] }
      let products = try await repository.allProducts()
      var response = try JSONCoding.response(List(products: products))
      response.headers.add("ETag", CatalogSnapshot.etag(of: response.body))
      return response
    }
    // Not under /admin/v1/products/: every word there is a product id someone may use.
    router.add(.put, "/admin/v1/product-order") { request, context in
      let admin = try auth.authenticate(request, context)
      let order = try Self.productOrder(try RequestFields(request: request))
      let products = try await repository.reorder(order, by: admin)
      await refresh(context)
      context.logger.notice(
        "products reordered", ["products": .int(order.count), "admin": .string(admin.name)])
      struct List: Encodable { var products: [Product] }
      return try JSONCoding.response(List(products: products))
    }
    router.add(.get, "/admin/v1/products/{product_id}") { request, context in
      _ = try auth.authenticate(request, context)
      let product = try await existing(context)
      return try Self.respond(product, status: 200)
    }
    router.add(.put, "/admin/v1/products/{product_id}") { request, context in
      let admin = try auth.authenticate(request, context)
      let id = context.parameters["product_id"] ?? ""
      let fields = try RequestFields(request: request)
      // A PUT replaces the whole product: it is validated before the database is read.
      let draft = try ProductDraft.replacing(productId: id, with: fields)
      let result = try await repository.write(
        productId: id, ifMatch: request.headers["If-Match"],
        ifNoneMatch: request.headers["If-None-Match"], by: admin
      ) { _ in draft }
      await refresh(context)
      context.logger.notice(
        "product written",
        ["product_id": .string(id), "admin": .string(admin.name), "created": .bool(result.created)])
      return try Self.respond(result.product, status: result.created ? 201 : 200)
    }
    router.add(.patch, "/admin/v1/products/{product_id}") { request, context in
      let admin = try auth.authenticate(request, context)
      let id = try Self.productId(context)
      let fields = try RequestFields(request: request)
      let result = try await repository.write(
        productId: id, ifMatch: request.headers["If-Match"], by: admin
      ) { current in
        guard let current else {
          throw HTTPError(
            404, code: "product_not_found", detail: "no product \(id); create it with PUT")
        }
        return try ProductDraft.patching(current, with: fields)
      }
      await refresh(context)
      context.logger.notice(
        "product updated", ["product_id": .string(id), "admin": .string(admin.name)])
      return try Self.respond(result.product, status: 200)
    }
    router.add(.delete, "/admin/v1/products/{product_id}") { request, context in
      let admin = try auth.authenticate(request, context)
      let id = try Self.productId(context)
      try await repository.remove(
        productId: id, ifMatch: request.headers["If-Match"], by: admin)
      await refresh(context)
      context.logger.notice(
        "product removed", ["product_id": .string(id), "admin": .string(admin.name)])
      return Response(status: 204)
    }
    router.add(.get, "/admin/v1/products/{product_id}/price-history") { request, context in
      _ = try auth.authenticate(request, context)
      let product = try await existing(context)
      struct History: Encodable {
        var productId: String
        var history: [PriceChange]
        enum CodingKeys: String, CodingKey {
          case productId = "product_id"
          case history
        }
      }
      return try JSONCoding.response(
        History(
          productId: product.productId,
          history: try await repository.priceHistory(product.productId)))
    }
  }

  /// The path's product id; one that no product can have is simply not found.
  static func productId(_ context: Context) throws -> String {
    let id = context.parameters["product_id"] ?? ""
    guard ProductDraft.isValidProductId(id) else {
      throw HTTPError(404, code: "product_not_found", detail: "no such product")
    }
    return id
  }

  private func existing(_ context: Context) async throws -> Product {
    let id = try Self.productId(context)
    guard let product = try await repository.product(id) else {
      throw HTTPError(404, code: "product_not_found", detail: "no product \(id)")
    }
    return product
  }

  /// This instance serves its own change at once; the others follow through NOTIFY.
  private func refresh(_ context: Context) async {
    do { try await cache.reload() } catch {
      context.logger.warning(
        "catalog reload after write failed; will retry", ["error": .string("\(error)")])
      cache.requestReload()
    }
  }

  static func respond(_ product: Product, status: Int) throws -> Response {
    try JSONCoding.response(
      product, status: status, headers: HTTPHeaders([("ETag", product.etag)]))
  }
}
