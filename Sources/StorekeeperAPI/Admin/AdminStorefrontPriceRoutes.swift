import HTTP
import StorekeeperCore

/// `/admin/v1/products/{product_id}/prices[/{storefront}]`: a product's prices per storefront.
/// The storefront is ISO 3166-1 in either spelling (DEU or DE) and kept as alpha-3.
package struct AdminStorefrontPriceRoutes: Sendable {
  let auth: AdminAuthenticator
  let repository: CatalogRepository
  let cache: ServedCatalog

  package init(auth: AdminAuthenticator, repository: CatalogRepository, cache: ServedCatalog) {
    self.auth = auth
    self.repository = repository
    self.cache = cache
  }

  struct Listing: Encodable {
    var productId: String
    var price: String
    var currency: String
    var prices: [StorefrontPrice]
    enum CodingKeys: String, CodingKey {
      case productId = "product_id"
      case price, currency, prices
    }
  }

  package func register(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/products/{product_id}/prices") { request, context in
      _ = try auth.authenticate(request, context)
      let id = try AdminProductRoutes.productId(context)
      guard let product = try await repository.product(id) else {
        throw HTTPError(404, code: "product_not_found", detail: "no product \(id)")
      }
      return try JSONCoding.response(
        Listing(
          productId: id, price: product.price, currency: product.currency,
          prices: try await repository.storefrontPrices(id)))
    }
    router.add(.put, "/admin/v1/products/{product_id}/prices/{storefront}") { request, context in
      let admin = try auth.authenticate(request, context)
      let id = try AdminProductRoutes.productId(context)
      var fields = try RequestFields(request: request)
      fields.rejectUnknown(allowed: ["price", "currency"])
      let storefront = Storefront.canonical(context.parameters["storefront"] ?? "")
      if storefront == nil {
        fields.fail("storefront", "must be an ISO 3166-1 country code such as DEU or DE")
      }
      let currency = fields.string("currency", required: true, maxLength: 3) ?? ""
      var price = fields.string("price", required: true, maxLength: 40) ?? ""
      if fields.has("currency"), fields.has("price") {
        if let normalised = Self.normalise(price, currency, &fields) { price = normalised }
      }
      try fields.validate()
      let result = try await repository.setStorefrontPrice(
        productId: id, storefront: storefront ?? "", price: price, currency: currency, by: admin)
      await refresh(context)
      context.logger.notice(
        "storefront price written",
        [
          "product_id": .string(id), "storefront": .string(storefront ?? ""),
          "admin": .string(admin.name),
        ])
      return try JSONCoding.response(result.price, status: result.created ? 201 : 200)
    }
    router.add(.delete, "/admin/v1/products/{product_id}/prices/{storefront}") {
      request, context in
      let admin = try auth.authenticate(request, context)
      let id = try AdminProductRoutes.productId(context)
      guard let storefront = Storefront.canonical(context.parameters["storefront"] ?? "") else {
        throw HTTPError(404, code: "price_not_found", detail: "no such storefront")
      }
      try await repository.removeStorefrontPrice(productId: id, storefront: storefront, by: admin)
      await refresh(context)
      context.logger.notice(
        "storefront price removed",
        [
          "product_id": .string(id), "storefront": .string(storefront),
          "admin": .string(admin.name),
        ])
      return Response(status: 204)
    }
  }

  /// The price in the currency's minor units, written as products are ("6.00", "600" JPY).
  static func normalise(_ price: String, _ currency: String, _ fields: inout RequestFields)
    -> String?
  {
    guard let exponent = Currency.exponent(of: currency) else {
      fields.fail("currency", "must be an ISO 4217 code such as USD, EUR or JPY")
      return nil
    }
    do {
      return Money.format(
        minorUnits: try Money.minorUnits(price, exponent: exponent), exponent: exponent)
    } catch .notADecimal {
      fields.fail("price", "must be a non-negative decimal string such as \"6.00\"")
    } catch .tooManyFractionDigits(let allowed) {
      fields.fail("price", "\(currency) allows \(allowed) fraction digit\(allowed == 1 ? "" : "s")")
    } catch {
      fields.fail("price", "must have at most \(Money.maxIntegerDigits) integer digits")
    }
    return nil
  }

  /// This instance serves its own change at once; the others follow through NOTIFY.
  private func refresh(_ context: Context) async {
    do { try await cache.reload() } catch {
      context.logger.warning(
        "catalog reload after write failed; will retry", ["error": .string("\(error)")])
      cache.requestReload()
    }
  }
}
