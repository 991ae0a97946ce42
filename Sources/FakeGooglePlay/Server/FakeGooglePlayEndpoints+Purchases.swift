import Foundation
import GooglePlay
import HTTP

extension FakeGooglePlayEndpoints {
  static let invalidState = "The purchase is not in a valid state to perform the desired operation."

  /// `purchases.products.get`.
  func getProduct(_ context: Context) throws -> Response {
    let package = try checkPackage(context)
    let product = try findProduct(package, context)
    return FakeGoogleError.json(product.json)
  }

  /// `purchases.productsv2.getproductpurchasev2`: `purchaseCompletionTime` is when the
  /// purchase became PURCHASED (absent while pending), as the Discovery document says.
  func getProductV2(_ context: Context) throws -> Response {
    let package = try checkPackage(context)
    let token = context.parameters["token"] ?? ""
    guard let product = state.contents.withLock({ $0.products[token] }),
      product.packageName == package
    else { throw FakeAPIError(404, "The purchase token was not found.") }
    return FakeGoogleError.json(product.jsonV2)
  }

  /// `purchases.products.acknowledge` and `purchases.products.consume`: `{token}:verb`.
  func changeProduct(_ request: Request, _ context: Context) throws -> Response {
    let package = try checkPackage(context)
    let (token, verb) = Self.split(context.parameters["token"] ?? "")
    let productId = context.parameters["productId"] ?? ""
    let payload = (try? FakeControlBody(request))?.fields["developerPayload"] as? String
    try state.contents.withLock { contents throws(FakeAPIError) in
      guard var product = contents.products[token], product.packageName == package,
        product.productId == productId
      else { throw FakeAPIError(404, "The purchase token was not found.") }
      guard product.state == .purchased else { throw FakeAPIError(400, Self.invalidState) }
      switch verb {
      case "acknowledge":
        // Google refuses a second acknowledgement of the same purchase.
        guard !product.acknowledged else { throw FakeAPIError(400, Self.invalidState) }
        product.acknowledged = true
        if let payload { product.developerPayload = payload }
      case "consume":
        guard !product.consumed else { throw FakeAPIError(400, Self.invalidState) }
        product.consumed = true
        product.acknowledged = true
      default:
        throw FakeAPIError(404, "Method not found.")
      }
      contents.products[token] = product
    }
    return Response(status: 204)
  }

  /// `orders.get`: Google answers 404 for an order of another app as for none.
  func getOrder(_ context: Context) throws -> Response {
    let package = try checkPackage(context)
    let orderId = context.parameters["orderId"] ?? ""
    guard let order = state.contents.withLock({ $0.orders[orderId] }), order.packageName == package
    else { throw FakeAPIError(404, "The order was not found.") }
    return FakeGoogleError.json(order.json)
  }

  /// `purchases.subscriptionsv2.get`.
  func getSubscription(_ context: Context) throws -> Response {
    let package = try checkPackage(context)
    let token = context.parameters["token"] ?? ""
    guard let subscription = state.contents.withLock({ $0.subscriptions[token] }),
      subscription.packageName == package
    else { throw FakeAPIError(404, "The purchase token was not found.") }
    return FakeGoogleError.json(subscription.json)
  }

  /// `purchases.subscriptions.acknowledge`.
  func acknowledgeSubscription(_ request: Request, _ context: Context) throws -> Response {
    let package = try checkPackage(context)
    let (token, verb) = Self.split(context.parameters["token"] ?? "")
    let productId = context.parameters["subscriptionId"] ?? ""
    guard verb == "acknowledge" else { throw FakeAPIError(404, "Method not found.") }
    try state.contents.withLock { contents throws(FakeAPIError) in
      guard var subscription = contents.subscriptions[token],
        subscription.packageName == package, subscription.productId == productId
      else { throw FakeAPIError(404, "The purchase token was not found.") }
      guard subscription.state != .pending, subscription.state != .pendingPurchaseCanceled,
        !subscription.acknowledged
      else { throw FakeAPIError(400, Self.invalidState) }
      subscription.acknowledged = true
      contents.subscriptions[token] = subscription
    }
    return Response(status: 204)
  }

  /// `purchases.voidedpurchases.list`: oldest voided first, token paging.
  func voidedPurchases(_ request: Request, _ context: Context) throws -> Response {
    let package = try checkPackage(context)
    let now = state.nowMillis()
    var start = now - 30 * 86_400_000
    var end = now
    var type = 0
    var offset = 0
    var pageSize = configuration.voidedPageSize
    if let text = request.query["maxResults"] {
      guard let size = Int(text), size > 0 else {
        throw FakeAPIError(400, "Invalid value for maxResults.")
      }
      pageSize = min(size, 1000)
    }
    if let token = request.query["token"] {
      // The token carries the query it continues; the other filters are then ignored.
      guard let cursor = FakeVoidedCursor(token: token) else {
        throw FakeAPIError(400, "Invalid pagination token.")
      }
      (start, end, type, offset) = (cursor.start, cursor.end, cursor.type, cursor.offset)
    } else {
      if let text = request.query["startTime"] {
        guard let value = Int64(text) else { throw FakeAPIError(400, "Invalid startTime.") }
        guard value >= now - 30 * 86_400_000 else {
          throw FakeAPIError(400, "startTime is older than 30 days.")
        }
        start = value
      }
      if let text = request.query["endTime"] {
        guard let value = Int64(text), value <= now else {
          throw FakeAPIError(400, "Invalid endTime.")
        }
        end = value
      }
      if let text = request.query["type"] {
        guard let value = Int(text), value == 0 || value == 1 else {
          throw FakeAPIError(400, "Invalid type.")
        }
        type = value
      }
    }
    // Google lists a quantity-based partial refund only when asked (the Discovery document's
    // `voidedQuantity`: "may only be returned when includeQuantityBasedPartialRefund is set to
    // true"), and reads the flag on every page here.
    var partial = false
    if let text = request.query["includeQuantityBasedPartialRefund"] {
      guard text == "true" || text == "false" else {
        throw FakeAPIError(400, "Invalid value for includeQuantityBasedPartialRefund.")
      }
      partial = text == "true"
    }
    let matching = state.contents.withLock { $0.voided }.filter {
      $0.packageName == package && $0.voidedTimeMillis >= start && $0.voidedTimeMillis <= end
        && (type == 1 || !$0.isSubscription) && (partial || $0.quantity == nil)
    }.sorted { $0.voidedTimeMillis < $1.voidedTimeMillis }
    let page = matching.dropFirst(offset).prefix(pageSize)
    var json: [String: Any] = [
      "pageInfo": [
        "totalResults": matching.count, "resultPerPage": pageSize, "startIndex": offset,
      ]
    ]
    if !page.isEmpty { json["voidedPurchases"] = page.map(\.json) }
    if offset + page.count < matching.count {
      let next = FakeVoidedCursor(start: start, end: end, type: type, offset: offset + page.count)
      json["tokenPagination"] = ["nextPageToken": next.token]
    }
    return FakeGoogleError.json(json)
  }

  func findProduct(_ package: String, _ context: Context) throws -> FakeProduct {
    let token = context.parameters["token"] ?? ""
    guard let product = state.contents.withLock({ $0.products[token] }),
      product.packageName == package
    else { throw FakeAPIError(404, "The purchase token was not found.") }
    // Google's answer for a token it knows, asked for under another product.
    guard product.productId == context.parameters["productId"] else {
      throw FakeAPIError(
        400, "The purchase token does not match the product ID.",
        reason: "purchaseTokenDoesNotMatchProductId")
    }
    return product
  }

  /// `token:verb` → (token, verb); no colon → (token, "").
  static func split(_ segment: String) -> (String, String) {
    guard let colon = segment.lastIndex(of: ":") else { return (segment, "") }
    return (String(segment[..<colon]), String(segment[segment.index(after: colon)...]))
  }
}
