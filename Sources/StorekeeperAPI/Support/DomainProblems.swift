import HTTP
import StorekeeperCore

// The one place where the domain's refusals become HTTP answers: a status and a problem `code`
// per case. The domain decides what happened; only the edge knows how to say it over HTTP.

/// A domain error the edge knows how to answer: its status and problem `code`.
protocol DomainProblem: Error {
  var problem: HTTPError { get }
}

extension SettlementRefusal: DomainProblem {
  var problem: HTTPError {
    switch self {
    case .orderNotFound:
      HTTPError(404, code: code, detail: detail)
    case .orderAlreadyPaid, .orderRefunded, .orderTransferred, .transactionAlreadyUsed,
      .purchaseNotYours, .googlePurchaseCanceled:
      HTTPError(409, code: code, detail: detail)
    case .googlePurchaseUnknown:
      HTTPError(
        422, code: code, detail: detail,
        fields: [FieldError(field: "purchase_token", message: "unknown to Google Play")])
    case .invalidProof(let reason, let field):
      HTTPError(
        422, code: code, detail: detail, fields: [FieldError(field: field, message: reason)])
    case .transactionRevoked, .productMismatch, .accountTokenMismatch, .quantityMismatch,
      .storeMismatch:
      HTTPError(422, code: code, detail: detail)
    }
  }
}

extension OrderRefusal: DomainProblem {
  var problem: HTTPError {
    switch self {
    case .productNotFound(let productId):
      HTTPError(404, code: "product_not_found", detail: "no product \(productId)")
    case .productInactive(let productId):
      HTTPError(422, code: "product_inactive", detail: "product \(productId) is not for sale")
    case .quantityNotAllowed:
      HTTPError(
        422, code: "quantity_not_allowed",
        detail: "only consumables can be bought more than once per order",
        fields: [FieldError(field: "quantity", message: "must be 1 for this product")])
    case .tooManyOpenOrders(let limit):
      HTTPError(
        409, code: "too_many_open_orders",
        detail:
          "this user already has \(limit) unpaid orders; pay, cancel or let one expire first")
    case .contended:
      HTTPError(
        503, code: "overloaded",
        detail: "too many orders for this user are being created at once; retry shortly",
        headers: HTTPHeaders([("Retry-After", "1")]))
    }
  }
}

extension TransferRefusal: DomainProblem {
  var problem: HTTPError {
    switch self {
    case .transactionNotFound: HTTPError(404, code: code, detail: detail)
    case .alreadyOwned, .notTransferable: HTTPError(409, code: code, detail: detail)
    }
  }
}

extension CatalogRefusal: DomainProblem {
  var problem: HTTPError {
    switch self {
    case .productNotFound(let productId):
      HTTPError(404, code: "product_not_found", detail: "no product \(productId)")
    case .preconditionFailed:
      HTTPError(
        412, code: "precondition_failed",
        detail: "the product changed since it was read; fetch it again")
    case .orderStale:
      HTTPError(
        412, code: "precondition_failed",
        detail:
          "the catalog changed since it was read (a product was edited, added or removed); nothing was reordered, fetch it again"
      )
    case .productExists(let productId):
      HTTPError(
        412, code: "precondition_failed",
        detail: "\(productId) exists already and If-None-Match: * asked to create it only")
    case .productHasOrders(let productId):
      HTTPError(
        409, code: "product_has_orders",
        detail:
          "orders or store purchases refer to \(productId); archive it with PATCH {\"active\": false} instead"
      )
    case .productTypeLocked(let productId, let type):
      HTTPError(
        409, code: "product_type_locked",
        detail: "orders refer to \(productId); its type stays \(type.rawValue)")
    case .googleProductIdTaken(let googleId):
      HTTPError(
        409, code: "google_product_id_taken",
        detail: "another product already goes by \(googleId) on Google Play",
        fields: [FieldError(field: "google_product_id", message: "is another product's")])
    }
  }
}

extension NotificationRefusal: DomainProblem {
  var problem: HTTPError { HTTPError(400, code: code, detail: detail) }
}

extension WebhookRefusal: DomainProblem {
  var problem: HTTPError {
    switch self {
    case .endpointNotFound(let id):
      HTTPError(404, code: "webhook_endpoint_not_found", detail: "no webhook endpoint \(id)")
    case .tooManyEndpoints(let max):
      HTTPError(
        409, code: "too_many_webhook_endpoints",
        detail: "at most \(max) webhook endpoints may exist (WEBHOOK_MAX_ENDPOINTS)")
    case .eventNotFound(let id):
      HTTPError(404, code: "event_not_found", detail: "no event \(id)")
    case .eventNotForEndpoint(let id, let why):
      HTTPError(
        422, code: "event_not_for_endpoint",
        detail: "event \(id) is not replayed to this endpoint: \(why)")
    case .replayTooLarge(let count, let max):
      HTTPError(
        422, code: "replay_too_large",
        detail: "the range holds \(count) events; one replay may queue at most \(max)")
    }
  }
}

extension AdjustmentRefusal: DomainProblem {
  var problem: HTTPError {
    switch self {
    case .keyReused:
      HTTPError(
        422, code: "idempotency_key_reused",
        detail: "this Idempotency-Key was used for a different adjustment")
    }
  }
}

extension OrderStateMachine.Refused {
  /// A transition the table refuses is a bug in the caller, not the client's doing.
  var problem: HTTPError {
    HTTPError(500, code: "internal_error", detail: "an internal error occurred")
  }
}

extension VerificationBusy: DomainProblem {
  /// Retryable: the request waited its turn in vain (or found the queue full) and stored
  /// nothing.
  var problem: HTTPError {
    HTTPError(
      503, code: "verification_busy",
      detail: "too many proofs are being verified right now; retry shortly",
      headers: HTTPHeaders([("Retry-After", String(retryAfterSeconds))]))
  }
}

extension WalletRefusal: DomainProblem {
  var problem: HTTPError {
    switch self {
    case .insufficientBalance(let balance):
      var problem = HTTPError(
        409, code: "insufficient_balance",
        detail: "the balance is \(balance), less than the amount asked for")
      problem.members = [("balance", String(balance))]
      return problem
    case .keyReused:
      return HTTPError(
        422, code: "idempotency_key_reused",
        detail: "this Idempotency-Key was used for a different operation of this user")
    }
  }
}

extension GooglePlayOff: DomainProblem {
  /// Not the client's fault and not for ever: the operator has not configured Google Play.
  var problem: HTTPError {
    HTTPError(
      503, code: "google_play_disabled",
      detail: "Google Play is not configured on this server (GOOGLE_PLAY_PACKAGE_NAME)")
  }
}

extension GooglePushRefusal: DomainProblem {
  var problem: HTTPError {
    switch self {
    case .notConfigured:
      HTTPError(
        503, code: "google_push_not_configured",
        detail:
          "set GOOGLE_PUBSUB_AUDIENCE and GOOGLE_PUBSUB_SERVICE_ACCOUNT to take Google Play's pushes"
      )
    case .unauthenticated:
      HTTPError(
        401, code: "push_unauthenticated",
        detail: "the push carries no valid OIDC token of the configured push service account")
    case .keysUnavailable:
      HTTPError(
        503, code: "push_keys_unavailable", detail: "Google's token keys cannot be fetched now",
        headers: HTTPHeaders([("Retry-After", "10")]))
    case .malformed(let why):
      HTTPError(400, code: "invalid_push", detail: why)
    }
  }
}
