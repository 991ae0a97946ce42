import Foundation
import GooglePlay
import HTTP
import StorekeeperLogging
import Synchronization

/// The fake Google Play's handlers and the state they share.
final class FakeGooglePlayEndpoints: Sendable {
  static let apiPrefix = "/androidpublisher/v3/applications/{packageName}/purchases"

  let configuration: FakeGooglePlayServer.Configuration
  let state = FakePlayState()
  let serviceAccount: FakeServiceAccount
  let signer: FakeOIDCSigner
  let outbox: FakePushOutbox
  /// `http://host:port` once bound: what assertions' `aud` must be (with `/token`).
  let origin = Mutex("")

  init(configuration: FakeGooglePlayServer.Configuration) throws {
    self.configuration = configuration
    serviceAccount = try FakeServiceAccount(clientEmail: configuration.clientEmail)
    signer = try FakeOIDCSigner()
    outbox = FakePushOutbox(
      settings: .init(
        url: configuration.pushURL, audience: configuration.pushAudience,
        email: configuration.pushEmail, subscription: configuration.pushSubscription,
        minBackoff: configuration.pushMinBackoff, maxBackoff: configuration.pushMaxBackoff,
        retention: configuration.pushRetention),
      signer: signer, logger: configuration.logger)
  }

  var logger: Logger { configuration.logger }

  func router() -> Router {
    var router = Router()
    router.add(.get, "/fake/v1/health") { _, _ in FakeGoogleError.json(["status": "ok"]) }
    router.add(.post, "/token") { [self] request, _ in await token(request) }
    router.add(.get, "/oauth2/v3/certs") { [self] _, _ in
      Response(
        headers: ["Content-Type": "application/json", "Cache-Control": "public, max-age=300"],
        body: signer.jwksBody)
    }
    let products = Self.apiPrefix + "/products/{productId}/tokens/{token}"
    router.add(.get, products) { [self] request, context in
      await api(request) { try getProduct(context) }
    }
    router.add(.post, products) { [self] request, context in
      if let fault = state.takeFault(.writes), fault.status != 0 {
        return Self.faultResponse(fault)
      }
      return await api(request) { try changeProduct(request, context) }
    }
    router.add(.get, Self.apiPrefix + "/productsv2/tokens/{token}") { [self] request, context in
      await api(request) { try getProductV2(context) }
    }
    router.add(.get, Self.apiPrefix + "/subscriptionsv2/tokens/{token}") {
      [self] request, context in
      if let fault = state.takeFault(.subscriptions), fault.status != 0 {
        return Self.faultResponse(fault)
      }
      return await api(request) { try getSubscription(context) }
    }
    router.add(.post, Self.apiPrefix + "/subscriptions/{subscriptionId}/tokens/{token}") {
      [self] request, context in
      if let fault = state.takeFault(.writes), fault.status != 0 {
        return Self.faultResponse(fault)
      }
      return await api(request) { try acknowledgeSubscription(request, context) }
    }
    router.add(.get, Self.apiPrefix + "/voidedpurchases") { [self] request, context in
      await api(request) { try voidedPurchases(request, context) }
    }
    router.add(.get, "/androidpublisher/v3/applications/{packageName}/orders/{orderId}") {
      [self] request, context in
      if let fault = state.takeFault(.orders), fault.status != 0 {
        return Self.faultResponse(fault)
      }
      return await api(request) { try getOrder(context) }
    }
    registerControls(&router)
    return router
  }

  /// Every API call: injected faults first (so a 401 can be forced), then the bearer token,
  /// then the call itself.
  func api(_ request: Request, _ body: () throws -> Response) async -> Response {
    if let fault = state.takeFault(.api) {
      if fault.delayMillis > 0 { try? await Task.sleep(for: .milliseconds(fault.delayMillis)) }
      if fault.status != 0 { return Self.faultResponse(fault) }
    }
    guard let header = request.headers["Authorization"], header.hasPrefix("Bearer ") else {
      return FakeGoogleError.api(
        401, "Request is missing required authentication credential.")
    }
    let presented = String(header.dropFirst(7))
    let now = FakePlayState.realSeconds()
    let valid = state.contents.withLock { $0.accessTokens[presented].map { $0 > now } ?? false }
    guard valid else {
      return FakeGoogleError.api(401, "Request had invalid authentication credentials.")
    }
    do {
      return try body()
    } catch let error as FakeAPIError {
      return FakeGoogleError.api(error.status, error.message, reason: error.reason)
    } catch {
      return FakeGoogleError.api(500, "Internal error encountered.")
    }
  }

  static func faultResponse(_ fault: FakeFault) -> Response {
    var headers = HTTPHeaders()
    if let seconds = fault.retryAfterSeconds { headers.add("Retry-After", String(seconds)) }
    let message =
      switch fault.status {
      case 429: "Quota exceeded for quota metric 'Queries' of service androidpublisher."
      case 401: "Request had invalid authentication credentials."
      case 403: "The current user has insufficient permissions to perform the requested operation."
      case 404: "The purchase token was not found."
      case 410: "The purchase is no longer available."
      default: "The service is currently unavailable."
      }
    return FakeGoogleError.api(fault.status, message, headers: headers)
  }

  /// The package asked for must be one the fake serves, as Google answers only for apps the
  /// service account can see.
  func checkPackage(_ context: Context) throws -> String {
    let package = context.parameters["packageName"] ?? ""
    guard package == configuration.packageName else {
      throw FakeAPIError(
        403, "The current user has insufficient permissions to perform the requested operation.")
    }
    return package
  }
}

/// A Google-shaped refusal a handler throws.
struct FakeAPIError: Error {
  var status: Int
  var message: String
  /// Google's `errors[].reason` when it says more than the status.
  var reason: String?
  init(_ status: Int, _ message: String, reason: String? = nil) {
    self.status = status
    self.message = message
    self.reason = reason
  }
}
