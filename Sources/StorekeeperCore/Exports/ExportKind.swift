/// What `storekeeper export` writes: orders by creation, ledger rows by when they were written,
/// the stores' transactions by purchase. Each kind is read in keyset pages on an index, so an
/// export of any size holds one page in memory and never one long query.
package enum ExportKind: String, Sendable, CaseIterable {
  case orders, ledger, transactions

  /// The columns, in order (CSV's header; JSON lines' keys).
  var columns: [String] {
    switch self {
    case .orders:
      [
        "trade_no", "user_id", "product_id", "quantity", "unit_price", "currency", "amount",
        "trade_status", "close_reason", "origin", "transaction_id", "environment", "created_at",
        "paid_at", "closed_at",
      ]
    case .ledger:
      [
        "id", "user_id", "asset", "amount", "kind", "trade_no", "transaction_id", "environment",
        "created_at", "debt", "operation_id", "adjustment_id",
      ]
    case .transactions:
      [
        "store", "transaction_id", "original_transaction_id", "user_id", "product_id",
        "environment", "country", "currency", "price", "is_trial", "purchase_date",
        "expires_date", "refunded_at", "trade_no",
      ]
    }
  }

  /// Column expressions over `x`, each as text (NULL stays NULL), in `columns`' order.
  var expressions: [String] {
    func time(_ column: String) -> String { SQLTime.text("x.\(column)") }
    // A Google purchase Google named no order for is known by its purchase token, a
    // credential: exports name it by a digest, as the charts do.
    let transactionId = """
      CASE WHEN EXISTS (SELECT 1 FROM google_purchases gp WHERE gp.purchase_token = x.transaction_id)
        THEN 'token:' || left(md5(x.transaction_id), 16) ELSE x.transaction_id END
      """
    switch self {
    case .orders:
      return [
        "x.trade_no", "x.user_id", "x.product_id", "x.quantity::text", "x.unit_price::text",
        "x.currency::text", "x.amount::text", "x.trade_status", "x.close_reason", "x.origin",
        transactionId, "x.environment", time("created_at"), time("paid_at"),
        time("closed_at"),
      ]
    case .ledger:
      return [
        "x.id::text", "x.user_id", "x.asset", "x.amount::text", "x.kind", "x.trade_no",
        transactionId, "x.environment", time("created_at"),
        // What a refund left owed (REFUND_POLICY=debt), and the spend or grant, or the
        // admin's adjustment, a row belongs to: without them what users owe cannot be rebuilt.
        "x.debt::text", "x.operation_id::text", "x.adjustment_id::text",
      ]
    case .transactions:
      return [
        "x.store", "x.transaction_id", "x.original_transaction_id", "x.user_id", "x.product_id",
        "x.environment", "x.country", "x.currency", "trim_scale(x.price)::text",
        "x.is_trial::text", time("purchase_date"), time("expires_date"), time("refunded_at"),
        "x.trade_no",
      ]
    }
  }

  /// The columns that hold numbers, written as they are; every other column's text is
  /// neutralised in CSV when a spreadsheet would read it as a formula (`Exporter.line`).
  var numericColumns: Set<String> {
    ["quantity", "unit_price", "amount", "id", "price", "debt", "operation_id", "adjustment_id"]
  }

  /// The table (or view) and its time column: rows in [from, to) of it.
  var source: (table: String, time: String) {
    switch self {
    case .orders: ("orders", "created_at")
    case .ledger: ("ledger", "created_at")
    case .transactions: ("chart_transactions", "purchase_date")
    }
  }

  /// Where a page's keys are read when the source is not a table with the keyset's index: the
  /// stores' transactions, a store at a time, from each store's own table in purchase order
  /// (`chart_transactions`' UNION ALL passes no order down: every page sorted the rest of the
  /// range, and an export took time quadratic in its rows). The page is then read from the
  /// source by `export_key`. Nil: the source is paged directly.
  struct KeyedPart {
    /// `chart_transactions.store`.
    var store: String
    /// The table (as `t`), its purchase time, its key, and the rows the view leaves out.
    var table: String
    var time: String
    var key: String
    var filter: String
  }

  var keyedParts: [KeyedPart]? {
    switch self {
    case .orders, .ledger: nil
    case .transactions:
      [
        KeyedPart(
          store: "app_store", table: "apple_transactions t", time: "t.purchase_date",
          key: "t.transaction_id", filter: "NOT t.family_shared"),
        KeyedPart(
          store: "google_play", table: "google_orders t", time: "t.purchased_at",
          key: "t.order_id", filter: "true"),
      ]
    }
  }

  /// One column of the keyset: the column, how a page's last value is selected as text, and
  /// how that text is bound back (`$1`) to compare with.
  struct Key {
    var column: String
    var select: String
    var bound: String
  }

  /// The order rows are written in, unique per row, on an index: trade numbers (creation
  /// order), ledger ids. The stores' transactions are paged by `keyedParts` instead.
  var keyset: [Key] {
    switch self {
    case .orders: [Key(column: "x.trade_no", select: "x.trade_no", bound: "$1::text")]
    case .ledger: [Key(column: "x.id", select: "x.id::text", bound: "$1::bigint")]
    case .transactions: []
    }
  }
}
