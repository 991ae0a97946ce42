import Postgres

/// What support reads of one user beside their entitlements: the ledger rows and the Apple
/// transactions behind them, newest first, in keyset pages.
package struct UserHistory: Sendable {
  let database: PostgresPool

  package init(database: PostgresPool) {
    self.database = database
  }

  /// Up to `limit` ledger rows below `before`, and the cursor of the next page.
  package func ledger(userId: String, before: Int64?, limit: Int) async throws
    -> (items: [LedgerEntry], next: String?)
  {
    var query: PostgresQuery =
      "SELECT \(unescaped: LedgerEntry.columns) FROM ledger WHERE user_id = \(userId)"
    if let before { query.append(" AND id < \(before)") }
    query.append(" ORDER BY id DESC LIMIT \(limit + 1)")
    let rows = try await database.query(query).map(LedgerEntry.init(row:))
    return KeysetPage.split(rows, limit: limit) { String($0.id) }
  }

  /// What the user owes, per asset: refunds of what they had spent (`REFUND_POLICY=debt`),
  /// repaid by their next credits.
  package func debts(userId: String) async throws -> [String: Int64] {
    try await WalletService.debts(userId: userId, on: database)
  }

  /// Up to `limit` Apple transactions with ids below `after`, and the cursor of the next page.
  package func transactions(userId: String, after: String?, limit: Int) async throws
    -> (items: [UserTransaction], next: String?)
  {
    var query: PostgresQuery =
      "SELECT \(unescaped: UserTransaction.columns) FROM apple_transactions WHERE user_id = \(userId)"
    if let after { query.append(" AND transaction_id < \(after)") }
    query.append(" ORDER BY transaction_id DESC LIMIT \(limit + 1)")
    let rows = try await database.query(query).map(UserTransaction.init(row:))
    return KeysetPage.split(rows, limit: limit) { $0.transactionId }
  }

  /// The purchases of one app download (`appTransactionId`: one Apple Account in this app),
  /// whoever owns them, with ids below `after`: how support finds the user of a customer who
  /// re-installed and signed in afresh.
  package func transactions(appTransactionId: String, after: String?, limit: Int) async throws
    -> (items: [UserTransaction], next: String?)
  {
    var query: PostgresQuery = """
      SELECT \(unescaped: UserTransaction.columns) FROM apple_transactions
      WHERE app_transaction_id = \(appTransactionId)
      """
    if let after { query.append(" AND transaction_id < \(after)") }
    query.append(" ORDER BY transaction_id DESC LIMIT \(limit + 1)")
    let rows = try await database.query(query).map(UserTransaction.init(row:))
    return KeysetPage.split(rows, limit: limit) { $0.transactionId }
  }
}
