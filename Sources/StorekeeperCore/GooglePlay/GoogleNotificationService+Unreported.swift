import GooglePlay
import Postgres

/// A push about a purchase no report has brought. Google says whose it is only in the purchase
/// read back: the obfuscated account id the app gave the billing flow (an order this server
/// made) or, for an upgrade or downgrade, the purchase it replaces. Crediting it then, as
/// Apple's notifications pay the order their token names, keeps a purchase whose report never
/// comes (the app killed after the billing flow, offline for good) from going unacknowledged
/// until Google refunds it after three days, and an upgraded subscriber from losing the access
/// the replaced purchase gave while paying for the new one. The settlement is the report's
/// (`GoogleSettlement`), under the order's lock and the token's claim, so a report of the same
/// purchase racing this push credits it once and is answered as a replay.
extension GoogleNotificationService {
  func unreported(_ push: GoogleNotificationStore.Due, token: String) async throws -> Outcome {
    let unknown = Outcome.done(.ignored, "unknown_token")
    switch push.kind {
    case .subscription:
      let answer: SubscriptionPurchaseV2
      do {
        answer = try await client.subscriptionPurchase(token: token)
      } catch {
        return outcome(of: error)
      }
      monitor.resolved()
      let accountId = answer.externalAccountIdentifiers?.obfuscatedExternalAccountId
      if let order = try await namedOrder(accountId) {
        guard let product = try await catalog.product(order.productId) else { return unknown }
        return try await pay(
          order,
          GooglePurchaseVerifier.verdict(
            answer, token: token, product: product, packageName: client.packageName),
          product: product, push: push, token: token)
      }
      // An id naming no order of this server's is another installation's: its report would be
      // refused, and so is crediting it here.
      guard accountId?.isEmpty ?? true, let linked = answer.linkedPurchaseToken, linked != token,
        let owner = try await owner(of: linked),
        let product = try await product(of: answer)
      else { return unknown }
      let verdict = GooglePurchaseVerifier.verdict(
        answer, token: token, product: product, packageName: client.packageName)
      guard case .purchased(let purchase) = verdict else { return notPaid(verdict) }
      do {
        guard try await settlement.settle(purchase, replacingFor: owner, product: product) != nil
        else { return unknown }
        return .done(.processed, "settled_for_replaced_owner")
      } catch let refusal as SettlementRefusal {
        return try await refused(refusal, push: push, token: token)
      }
    case .oneTimeProduct:
      guard let sku = push.sku else { return unknown }
      let answer: ProductPurchase
      do {
        answer = try await client.productPurchase(productId: sku, token: token)
      } catch {
        return outcome(of: error)
      }
      monitor.resolved()
      guard let order = try await namedOrder(answer.obfuscatedExternalAccountId),
        let product = try await catalog.product(order.productId),
        product.draft.effectiveGoogleProductId == sku
      else { return unknown }
      let verdict = await settlement.verifier.completion(
        GooglePurchaseVerifier.verdict(
          answer, token: token, product: product, packageName: client.packageName))
      return try await pay(order, verdict, product: product, push: push, token: token)
    case .voidedPurchase, .test:
      // Refunded before anyone reported it: nothing to credit (the sweep logs it).
      return unknown
    }
  }

  /// The Google Play order an obfuscated account id names, if this server made it.
  private func namedOrder(_ accountId: String?) async throws -> Order? {
    guard let token = AccountToken.normalized(accountId) else { return nil }
    return try await orders.find(accountToken: token, store: .googlePlay, lock: false, on: database)
  }

  /// Who holds the purchase `token`, if anyone here does.
  private func owner(of token: String) async throws -> String? {
    try await database.query(
      "SELECT user_id FROM google_purchases WHERE purchase_token = \(token) AND user_id IS NOT NULL"
    ).first?.decode("user_id")
  }

  /// The catalog's product for a subscription's line item (and base plan, when it names one).
  private func product(of answer: SubscriptionPurchaseV2) async throws -> Product? {
    let items = answer.lineItems ?? []
    return try await catalog.allProducts().first { product in
      items.contains { item in
        item.productId == product.draft.effectiveGoogleProductId
          && (product.draft.googleBasePlanId == nil
            || item.offerDetails?.basePlanId == product.draft.googleBasePlanId)
      }
    }
  }

  /// Settles `order` with the purchase read back, as its report would.
  private func pay(
    _ order: Order, _ verdict: GoogleVerdict, product: Product,
    push: GoogleNotificationStore.Due, token: String
  ) async throws -> Outcome {
    guard case .purchased(let purchase) = verdict else { return notPaid(verdict) }
    do {
      let settled = try await settlement.settle(
        order.tradeNo, product: product, purchase: purchase, record: nil, cause: .notification)
      return .done(
        .processed, settled.delivery.newlyGranted ? "settled_named_order" : "already_settled")
    } catch let refusal as SettlementRefusal {
      return try await refused(refusal, push: push, token: token)
    }
  }

  /// A purchase Google does not hold as paid: pending (its completion is pushed again, and
  /// settles then), canceled, or not the product the order asked for.
  private func notPaid(_ verdict: GoogleVerdict) -> Outcome {
    switch verdict {
    case .retryable(let why): .retry(why)
    case .misconfigured(let why): .retry(why)
    case .pending: .done(.ignored, "pending_at_google")
    default: .done(.ignored, "unknown_token")
    }
  }

  /// A settlement that refused: claimed meanwhile by the app's report or restore (the push is
  /// then applied as one about a known purchase), or an order closed for good, whose report
  /// would be refused the same way.
  private func refused(
    _ refusal: SettlementRefusal, push: GoogleNotificationStore.Due, token: String
  ) async throws -> Outcome {
    if case .transactionAlreadyUsed = refusal, try await known(token) != nil {
      return try await apply(push, token: token)
    }
    return .done(.ignored, "not_settled: \(refusal.code)")
  }
}
