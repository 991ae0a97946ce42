import AppStore
import HTTP
import Postgres
import StorekeeperCore

/// `POST /v1/offers/signature`: signs a subscription's promotional offer for the signed-in
/// user, so the app can pass it to StoreKit, if the user is eligible (`OFFER_ELIGIBILITY`).
/// Without a key (`APPLE_OFFER_KEY_*` or `APPLE_API_KEY_*`) the route answers 503
/// `offers_not_configured`.
package struct OfferRoutes: Sendable {
  let signer: PromotionalOfferSigner?
  let catalog: ServedCatalog
  let auth: AppAuthenticator
  let clock: WallClock
  let eligibility: OfferEligibility
  /// `SANDBOX_POLICY=credit`: a sandbox subscription makes a subscriber, as it credits.
  let sandboxCounts: Bool
  let database: PostgresPool

  package init(
    signer: PromotionalOfferSigner?, catalog: ServedCatalog, auth: AppAuthenticator,
    clock: WallClock, eligibility: OfferEligibility, sandboxCounts: Bool,
    database: PostgresPool
  ) {
    self.signer = signer
    self.catalog = catalog
    self.auth = auth
    self.clock = clock
    self.eligibility = eligibility
    self.sandboxCounts = sandboxCounts
    self.database = database
  }

  package func register(_ router: inout APIRouter) {
    router.add(.post, "/v1/offers/signature") { request, context in
      let caller = try await auth.caller(request, context)
      return try await sign(request, caller: caller)
    }
  }

  func sign(_ request: Request, caller: Caller) async throws -> Response {
    let offer = try OfferRequest.parse(request, userRequired: caller.confinedTo == nil)
    // Whom the offer is for is checked like any app route, though the signature does not
    // name the user: a token's user may not ask on another's behalf.
    let userId =
      try auth.user(caller, named: offer.userId.isEmpty ? nil : offer.userId) ?? offer.userId
    guard let signer else {
      throw HTTPError(
        503, code: "offers_not_configured",
        detail: "promotional offers are off: no in-app purchase key is configured")
    }
    guard let product = catalog.snapshot.byId[offer.productId] else {
      throw HTTPError(
        404, code: "product_not_found", detail: "no product \(offer.productId) is for sale")
    }
    guard product.type == .autoRenewable else {
      throw HTTPError(
        422, code: "product_not_subscription",
        detail: "promotional offers are for auto-renewable subscriptions only")
    }
    // Last, so that a refusal for the request itself comes first and costs no query.
    guard try await eligibility.allows(userId, sandboxCounts: sandboxCounts, on: database) else {
      throw HTTPError(
        403, code: "offer_not_eligible",
        detail: "promotional offers are for the app's current or former subscribers")
    }
    if eligibility == .subscribers { try await checkOwnOrder(offer, userId: userId) }
    guard
      let signature = signer.sign(
        productId: product.productId, offerId: offer.offerId,
        appAccountToken: offer.appAccountToken, nonce: AccountToken.make(),
        timestamp: clock.milliseconds)
    else {
      throw HTTPError(500, code: "internal_error", detail: "the offer could not be signed")
    }
    return try JSONCoding.response(OfferSignatureView(signature))
  }

  /// The signature names no user: Apple checks only that the purchase carries the token it
  /// signs. Without one, or with another user's, a subscriber's signature would be anyone's
  /// discount for a day. So the token must be that of the caller's own unpaid App Store order
  /// for the product, which the purchase then pays.
  func checkOwnOrder(_ offer: OfferRequest, userId: String) async throws {
    guard let token = offer.appAccountToken else {
      throw HTTPError(
        422, code: "validation_failed", detail: "one or more fields are invalid",
        fields: [
          FieldError(
            field: "app_account_token",
            message: "required: the token of your order for this product")
        ])
    }
    let order = try await database.query(
      """
      SELECT user_id, product_id, trade_status FROM orders
      WHERE app_account_token = \(token)::uuid AND store = \(OrderStore.appStore)
      """
    ).first
    guard let order, UserId.same(try order.decode("user_id"), userId),
      try order.decode("product_id", as: String.self) == offer.productId,
      try order.decode("trade_status", as: TradeStatus.self) == .waitBuyerPay
    else {
      throw HTTPError(
        403, code: "offer_not_eligible",
        detail: "the app account token is not one of your unpaid orders for this product")
    }
  }
}
