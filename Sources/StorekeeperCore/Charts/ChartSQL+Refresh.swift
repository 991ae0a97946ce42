import Postgres

/// The SQL of the rollup's passes (Migrations/0080): each unit's share of `chart_hourly`
/// (`chart_unit_hourly`), and the per-user rollups (`chart_customers`, `chart_payments`,
/// `chart_trials`), recomputed for the units a pass found changed, or for all of them in a
/// whole rebuild. A unit is a subscription (store and original transaction id; a one-time
/// purchase is its own): a change to one of its transactions moves the ends of its others'
/// periods, so the whole unit is recomputed, which is also what makes a pass safe to repeat.
extension ChartSQL {
  /// A unit's share is stored whole, future period ends included: charts cut it at their
  /// `as_of`, so a stored row needs no pass when time moves on, only when its unit changes;
  /// but whether a purchase was refunded is as of the pass's `as_of` (the start of the hour
  /// `now()` is in), and the next pass recomputes the units refunded since.
  static let rollupMeasures = [
    "bought", "gross", "refunds", "refunded", "paid", "paid_amount", "paid_refunded",
    "paid_refunded_amount", "subscription_starts", "trial_starts", "subscription_delta",
    "trial_delta", "mrr_delta",
  ]
  static let rollupKey = "hour, store, environment, product_id, country, currency"

  /// The pass's scratch tables, gone at its commit.
  static let scratch: [PostgresQuery] = [
    "CREATE TEMP TABLE chart_dirty (store text NOT NULL, unit_id text NOT NULL) ON COMMIT DROP",
    "CREATE TEMP TABLE chart_dirty_users (user_id text NOT NULL) ON COMMIT DROP",
    "CREATE TEMP TABLE chart_new_payments (LIKE chart_payments) ON COMMIT DROP",
    """
    CREATE TEMP TABLE chart_dirty_payers (user_id text NOT NULL, resolution text NOT NULL,
      period timestamp NOT NULL) ON COMMIT DROP
    """,
    "CREATE TEMP TABLE chart_dirty_cohort_users (user_id text NOT NULL) ON COMMIT DROP",
  ]

  /// The changed units of a pass: rows written by transactions at or after `horizon`, and
  /// the units with a refund (a prorated one included) between the previous pass's `as_of`
  /// and this one's, which the previous pass saw but did not yet count as refunded (a refund
  /// counts from `as_of` on).
  static func changedUnits(horizon: String, asOf: String) -> PostgresQuery {
    """
    INSERT INTO chart_dirty (store, unit_id)
    SELECT 'app_store'::text, original_transaction_id
    FROM apple_transactions WHERE chart_xid >= \(horizon)::xid8
    UNION
    SELECT 'app_store', original_transaction_id
    FROM subscription_states WHERE chart_xid >= \(horizon)::xid8
    UNION
    -- chart_transactions' Google subscription (storekeeper_google_subscription).
    SELECT 'google_play', storekeeper_google_subscription(order_id, purchase_token, original_transaction_id)
    FROM google_purchases WHERE chart_xid >= \(horizon)::xid8
    UNION
    -- An order of a purchase (a renewal, a price the Orders API gave, a void of one order)
    -- changes its purchase's unit.
    SELECT 'google_play',
      storekeeper_google_subscription(gp.order_id, gp.purchase_token, gp.original_transaction_id)
    FROM google_orders o JOIN google_purchases gp ON gp.purchase_token = o.purchase_token
    WHERE o.chart_xid >= \(horizon)::xid8
    UNION
    SELECT 'app_store', original_transaction_id FROM apple_transactions
    WHERE revocation_date >= \(asOf)::timestamptz AND revocation_date < date_trunc('hour', now(), 'UTC')
    UNION
    SELECT 'app_store', original_transaction_id FROM apple_transactions
    WHERE prorated_refunded_at >= \(asOf)::timestamptz AND prorated_refunded_at < date_trunc('hour', now(), 'UTC')
    UNION
    SELECT 'google_play', storekeeper_google_subscription(order_id, purchase_token, original_transaction_id)
    FROM google_purchases
    WHERE revoked_at >= \(asOf)::timestamptz AND revoked_at < date_trunc('hour', now(), 'UTC')
    UNION
    SELECT 'google_play',
      storekeeper_google_subscription(gp.order_id, gp.purchase_token, gp.original_transaction_id)
    FROM google_orders o JOIN google_purchases gp ON gp.purchase_token = o.purchase_token
    WHERE o.refunded_at >= \(asOf)::timestamptz AND o.refunded_at < date_trunc('hour', now(), 'UTC')
    """
  }

  /// Whether the row aliased `alias` (of either view) belongs to a changed unit; the array
  /// lets PostgreSQL push the test into the periods' window and use the index on the
  /// original transaction id. nil is every unit (a whole rebuild).
  static func unit(_ alias: String, changed: Bool) -> String {
    guard changed else { return "true" }
    return """
      \(alias).original_transaction_id = ANY(ARRAY(SELECT unit_id FROM chart_dirty))
      AND (\(alias).store, \(alias).original_transaction_id) IN (SELECT store, unit_id FROM chart_dirty)
      """
  }

  /// The rows of a changed unit in one of the rollup tables.
  static func ofChangedUnits(_ table: String) -> String {
    "(\(table).unit_store, \(table).unit_id) IN (SELECT store, unit_id FROM chart_dirty)"
  }

  /// Every event of the units `changed` selects, summed by unit, hour and key: purchases and
  /// their prices, refunds whenever they came, subscription periods' starts and ends.
  static func unitShares(changed: Bool) -> String {
    let x = unit("x", changed: changed)
    return """
      e AS (
        SELECT x.store AS unit_store, x.original_transaction_id AS unit_id,
               date_trunc('hour', x.purchase_date, 'UTC') AS hour, x.store, x.environment, x.product_id,
               x.country, x.currency, 1 AS bought, coalesce(x.price, 0) AS gross, 0 AS refunds,
               0 AS refunded,
               CASE WHEN x.price > 0 THEN 1 ELSE 0 END AS paid,
               CASE WHEN x.price > 0 THEN x.price ELSE 0 END AS paid_amount,
               CASE WHEN x.price > 0 AND x.refunded_at < date_trunc('hour', now(), 'UTC') THEN 1 ELSE 0 END
                 AS paid_refunded,
               CASE WHEN NOT x.price > 0 THEN 0
                    WHEN x.refunded_at < date_trunc('hour', now(), 'UTC') THEN x.price
                    WHEN x.partly_refunded_at < date_trunc('hour', now(), 'UTC') THEN x.partly_refunded
                    ELSE 0 END AS paid_refunded_amount,
               0 AS ss, 0 AS ts, 0 AS sd, 0 AS td, 0 AS md
        FROM chart_transactions x WHERE \(x)
        UNION ALL
        SELECT x.store, x.original_transaction_id, date_trunc('hour', x.refunded_at, 'UTC'), x.store,
               x.environment, x.product_id, x.country, x.currency, 0, 0, 1,
               coalesce(x.price, 0) - coalesce(x.partly_refunded, 0), 0, 0, 0, 0, 0, 0, 0, 0, 0
        FROM chart_transactions x WHERE x.refunded_at IS NOT NULL AND \(x)
        UNION ALL
        -- Money refunded, no refund of the purchase (ChartSQL.revenue).
        SELECT x.store, x.original_transaction_id, date_trunc('hour', x.partly_refunded_at, 'UTC'),
               x.store, x.environment, x.product_id, x.country, x.currency, 0, 0, 0,
               x.partly_refunded, 0, 0, 0, 0, 0, 0, 0, 0, 0
        FROM chart_transactions x WHERE x.partly_refunded_at IS NOT NULL AND \(x)
        UNION ALL
        SELECT x.store, x.original_transaction_id, date_trunc('hour', x.starts_at, 'UTC'), x.store,
               x.environment, x.product_id, x.country, x.currency, 0, 0, 0, 0, 0, 0, 0, 0,
               CASE WHEN x.is_trial THEN 0 ELSE 1 END, CASE WHEN x.is_trial THEN 1 ELSE 0 END,
               CASE WHEN x.is_trial THEN 0 ELSE 1 END, CASE WHEN x.is_trial THEN 1 ELSE 0 END,
               coalesce(x.monthly_price, 0)
        FROM chart_subscription_periods x WHERE x.ends_at > x.starts_at AND \(x)
        UNION ALL
        SELECT x.store, x.original_transaction_id, date_trunc('hour', x.ends_at, 'UTC'), x.store,
               x.environment, x.product_id, x.country, x.currency, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
               CASE WHEN x.is_trial THEN 0 ELSE -1 END, CASE WHEN x.is_trial THEN -1 ELSE 0 END,
               -coalesce(x.monthly_price, 0)
        FROM chart_subscription_periods x WHERE x.ends_at > x.starts_at AND \(x)),
      shares AS (
        INSERT INTO chart_unit_hourly (unit_store, unit_id, \(rollupKey), \(rollupMeasures.joined(separator: ", ")))
        SELECT unit_store, unit_id, \(rollupKey), sum(bought), sum(gross), sum(refunds),
               sum(refunded), sum(paid), sum(paid_amount), sum(paid_refunded),
               sum(paid_refunded_amount), sum(ss), sum(ts), sum(sd), sum(td), sum(md)
        FROM e GROUP BY unit_store, unit_id, \(rollupKey)
        RETURNING *)
      """
  }

  /// Adds `rows` (a CTE of chart_unit_hourly's shape), summed by key and signed, to the
  /// generation's `chart_hourly`.
  static func addToHourly(_ rows: String, generation: Int64, sign: String) -> String {
    let sums = rollupMeasures.map { "\(sign)sum(\($0))" }.joined(separator: ", ")
    let updates = rollupMeasures.map { "\($0) = chart_hourly.\($0) + EXCLUDED.\($0)" }
      .joined(separator: ", ")
    return """
      INSERT INTO chart_hourly (generation, \(rollupKey), \(rollupMeasures.joined(separator: ", ")))
      SELECT \(generation), \(rollupKey), \(sums) FROM \(rows) GROUP BY \(rollupKey)
      ON CONFLICT (generation, \(rollupKey)) DO UPDATE SET \(updates)
      """
  }

  /// Takes the changed units' shares out of `chart_hourly`.
  static func removeShares(generation: Int64) -> PostgresQuery {
    PostgresQuery(
      unsafeSQL: """
        WITH old AS (
          DELETE FROM chart_unit_hourly WHERE \(ofChangedUnits("chart_unit_hourly")) RETURNING *)
        \(addToHourly("old", generation: generation, sign: "-"))
        """)
  }

  /// Computes the units' new shares and adds them to `chart_hourly` (a pass), or only stores
  /// them (a rebuild, which sums them into a new generation afterwards).
  static func insertShares(generation: Int64?) -> PostgresQuery {
    let changed = generation != nil
    let tail =
      generation.map { addToHourly("shares", generation: $0, sign: "") }
      ?? "SELECT count(*) FROM shares"
    return PostgresQuery(unsafeSQL: "WITH \(unitShares(changed: changed))\n\(tail)")
  }

  /// A rebuild's new generation of `chart_hourly`, from every unit's share.
  static func sumShares(generation: Int64) -> PostgresQuery {
    let sums = rollupMeasures.map { "sum(\($0))" }.joined(separator: ", ")
    return PostgresQuery(
      unsafeSQL: """
        INSERT INTO chart_hourly (generation, \(rollupKey), \(rollupMeasures.joined(separator: ", ")))
        SELECT \(generation), \(rollupKey), \(sums) FROM chart_unit_hourly GROUP BY \(rollupKey)
        """)
  }

  /// The changed units' transactions priced above 0 with an owner, into `table` (a pass
  /// stages them in `chart_new_payments`, to count payers before and after).
  static func insertPayments(changed: Bool, into table: String = "chart_payments") -> PostgresQuery
  {
    PostgresQuery(
      unsafeSQL: """
        INSERT INTO \(table) (unit_store, unit_id, transaction_id, user_id, purchased_at,
          store, environment, product_id, country, currency, price, refunded, partly_refunded)
        SELECT x.store, x.original_transaction_id, x.transaction_id, x.user_id, x.purchase_date,
               x.store, x.environment, x.product_id, x.country, x.currency, x.price,
               coalesce(x.refunded_at < date_trunc('hour', now(), 'UTC'), false),
               CASE WHEN x.partly_refunded_at < date_trunc('hour', now(), 'UTC') THEN x.partly_refunded ELSE 0 END
        FROM chart_transactions x
        WHERE x.price > 0 AND x.user_id IS NOT NULL AND \(unit("x", changed: changed))
        """)
  }

  /// The changed units' trial periods and whether each converted (`converted` reads `t`).
  static func insertTrials(changed: Bool) -> PostgresQuery {
    PostgresQuery(
      unsafeSQL: """
        INSERT INTO chart_trials (unit_store, unit_id, transaction_id, starts_at, ends_at, store,
          environment, product_id, country, converted)
        SELECT t.store, t.original_transaction_id, t.transaction_id, t.starts_at, t.ends_at,
               t.store, t.environment, t.product_id, t.country, \(converted)
        FROM chart_subscription_periods t WHERE t.is_trial AND \(unit("t", changed: changed))
        """)
  }

  /// The users whose first transaction may have changed: the owners of the changed units'
  /// transactions, and the users whose first transaction was in a changed unit (it may have
  /// moved to another user or environment).
  static let changedUsers = PostgresQuery(
    unsafeSQL: """
      INSERT INTO chart_dirty_users (user_id)
      SELECT x.user_id FROM chart_transactions x
      WHERE x.user_id IS NOT NULL AND \(unit("x", changed: true))
      UNION
      SELECT c.user_id FROM chart_customers c WHERE \(ofChangedUnits("c"))
      """)

  /// Each (changed) user's first transaction in each environment and over all of them, in
  /// the order `firsts` takes them.
  static func insertCustomers(changed: Bool) -> PostgresQuery {
    let users =
      changed
      ? "c.user_id = ANY(ARRAY(SELECT user_id FROM chart_dirty_users))" : "c.user_id IS NOT NULL"
    return PostgresQuery(
      unsafeSQL: """
        INSERT INTO chart_customers (user_id, scope, first_at, unit_store, unit_id, store,
          environment, product_id, country, is_trial)
        SELECT f.user_id, f.scope, f.purchase_date, f.store, f.original_transaction_id, f.store,
               f.environment, f.product_id, f.country, f.is_trial
        FROM ((SELECT DISTINCT ON (c.user_id, c.environment) c.*, c.environment AS scope
               FROM chart_transactions c WHERE \(users)
               ORDER BY c.user_id, c.environment, c.purchase_date, c.transaction_id)
              UNION ALL
              (SELECT DISTINCT ON (c.user_id) c.*, '*' AS scope
               FROM chart_transactions c WHERE \(users)
               ORDER BY c.user_id, c.purchase_date, c.transaction_id)) f
        """)
  }
}
