import Postgres

extension GoogleSettlement {
  /// Credits `purchase`, which names no order and replaces (`linkedPurchaseToken`) a purchase
  /// `owner` holds, to that owner on an order of its own, as Apple's notifications credit an
  /// upgrade to the subscriber (`origin: renewal`). Google lets only the account holding the
  /// replaced subscription make it, and it retires that subscription's access now, so the
  /// subscriber who had that access is who paid. Nil when the catalog no longer has the product.
  /// Throws `transactionAlreadyUsed` when a report or restore claimed it meanwhile (the order
  /// made here is rolled back with it).
  func settle(_ purchase: GooglePurchase, replacingFor owner: String, product: Product)
    async throws -> SettledOrder?
  {
    let settled = try await database.withTransaction { tx -> SettledOrder? in
      guard
        let order = try await orders.createForPurchase(
          userId: owner, productId: product.productId, quantity: 1, origin: .renewal,
          reason: .createdForRenewal, cause: .notification,
          detail: .object(["store": .string(OrderStore.googlePlay.rawValue)]),
          store: .googlePlay, on: tx)
      else { return nil }
      try Self.check(purchase, of: product, pays: order)
      return try await settleLocked(
        order, product: product, purchase: purchase, cause: .notification, record: nil, on: tx)
    }
    credited()
    return settled
  }
}
