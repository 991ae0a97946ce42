import Foundation
import GooglePlay

/// Asks Google about a purchase token for one product of the catalog: `subscriptionsv2.get`
/// for a subscription (`auto_renewable`), `products.get` for the rest. What Google says about
/// this server's credentials goes to the monitor on the way.
package struct GooglePurchaseVerifier: Sendable {
  let client: GooglePlayClient
  package let monitor: GooglePlayMonitor

  package init(client: GooglePlayClient, monitor: GooglePlayMonitor) {
    self.client = client
    self.monitor = monitor
  }

  package var packageName: String { client.packageName }

  package func verify(token: String, product: Product) async -> GoogleVerdict {
    let verdict: GoogleVerdict
    do {
      if product.type == .autoRenewable {
        let answer = try await client.subscriptionPurchase(token: token)
        verdict = Self.verdict(answer, token: token, product: product, packageName: packageName)
      } else {
        let answer = try await client.productPurchase(
          productId: product.draft.effectiveGoogleProductId, token: token)
        verdict = Self.verdict(answer, token: token, product: product, packageName: packageName)
      }
    } catch {
      verdict = Self.verdict(error)
    }
    switch verdict {
    case .misconfigured(let detail): monitor.record(detail)
    case .retryable, .refused: break
    default: monitor.resolved()
    }
    return await completion(verdict)
  }

  /// What a failed call means.
  package static func verdict(_ failure: GooglePlayFailure) -> GoogleVerdict {
    switch failure {
    case .retryable(let cause, _): .retryable(describe(cause))
    case .credentialsRefused(let status, let text):
      .misconfigured(status.map { "Google answered \($0): \(text)" } ?? text)
    case .unknownToken(let status, let text): .unknownToken("\(status): \(text)")
    case .badRequest(let text): .refused(text)
    case .unexpected(let status, let text): .refused("\(status): \(text)")
    }
  }

  /// A failure as a report's or a job's `last_error`.
  static func describe(_ failure: GooglePlayFailure) -> String {
    switch failure {
    case .retryable(let cause, _): describe(cause)
    case .credentialsRefused(let status, let text):
      "google_credentials_refused: \(status.map(String.init) ?? "unsigned") \(text)"
    case .unknownToken(let status, let text): "google_unknown_token: \(status) \(text)"
    case .badRequest(let text): "google_bad_request: \(text)"
    case .unexpected(let status, let text): "google_status \(status): \(text)"
    }
  }

  static func describe(_ cause: RetryableCause) -> String {
    switch cause {
    case .timeout: "google_timeout"
    case .unreachable(let text): "google_unreachable: \(text)"
    case .status(let status): status == 429 ? "google_quota (429)" : "google_status \(status)"
    case .unreadable(let text): "google_unreadable: \(text)"
    }
  }

  /// A one-time product purchase: only `purchaseState` 0 pays.
  static func verdict(
    _ answer: ProductPurchase, token: String, product: Product, packageName: String
  ) -> GoogleVerdict {
    switch answer.purchaseStateValue {
    case .pending: return .pending
    case .canceled: return .canceled
    case .purchased: break
    case nil: return .retryable("google_unreadable: purchaseState \(answer.purchaseState ?? -1)")
    }
    let googleId = product.draft.effectiveGoogleProductId
    if let named = answer.productId, named != googleId { return .otherProduct([named]) }
    return .purchased(
      GooglePurchase(
        token: token, packageName: packageName, kind: .product, googleProductId: googleId,
        basePlanId: nil, orderId: nonEmpty(answer.orderId) ?? token,
        quantity: max(1, answer.effectiveQuantity),
        obfuscatedAccountId: nonEmpty(answer.obfuscatedExternalAccountId),
        isTest: answer.isTestPurchase,
        purchaseTimeMs: answer.purchaseTimeMillis ?? 0, expiryTimeMs: nil,
        linkedPurchaseToken: nil, state: "purchased", acknowledged: answer.isAcknowledged,
        consumed: answer.isConsumed))
  }

  /// A subscription: every state but pending (and its cancellation) was paid at some point;
  /// what it grants now is its expiry's to say.
  static func verdict(
    _ answer: SubscriptionPurchaseV2, token: String, product: Product, packageName: String
  ) -> GoogleVerdict {
    switch answer.subscriptionStateValue {
    case .pending: return .pending
    case .pendingPurchaseCanceled: return .canceled
    case nil, .unspecified:
      return .retryable(
        "google_unreadable: subscriptionState \(answer.subscriptionState ?? "missing")")
    case .active, .inGracePeriod, .onHold, .paused, .canceled, .expired: break
    }
    let googleId = product.draft.effectiveGoogleProductId
    let items = answer.lineItems ?? []
    guard
      let item = items.first(where: { item in
        item.productId == googleId
          && (product.draft.googleBasePlanId == nil
            || item.offerDetails?.basePlanId == product.draft.googleBasePlanId)
      })
    else {
      return .otherProduct(
        items.map {
          [$0.productId, $0.offerDetails?.basePlanId].compactMap { $0 }.joined(separator: "/")
        })
    }
    let ids = answer.externalAccountIdentifiers
    let price = item.autoRenewingPlan?.recurringPrice
    let priceMicros = price?.micros
    return .purchased(
      GooglePurchase(
        token: token, packageName: packageName, kind: .subscription, googleProductId: googleId,
        basePlanId: item.offerDetails?.basePlanId,
        orderId: nonEmpty(item.latestSuccessfulOrderId) ?? token, quantity: 1,
        obfuscatedAccountId: nonEmpty(ids?.obfuscatedExternalAccountId),
        isTest: answer.isTestPurchase,
        purchaseTimeMs: answer.startDate.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
          ?? 0,
        expiryTimeMs: item.expiryDate.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) },
        linkedPurchaseToken: nonEmpty(answer.linkedPurchaseToken),
        state: answer.subscriptionState ?? "", acknowledged: answer.isAcknowledged,
        consumed: false,
        priceMicros: priceMicros, currency: priceMicros == nil ? nil : price?.currencyCode))
  }

  private static func nonEmpty(_ text: String?) -> String? {
    guard let text, !text.isEmpty else { return nil }
    return text
  }
}
