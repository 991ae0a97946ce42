import HTTP
import Postgres
import StorekeeperCore

/// Liveness, readiness and the API contract.
package struct OperationsRoutes: Sendable {
  let database: PostgresPool
  let migrations: MigrationFilesCache
  let openAPI: [UInt8]
  let appleSettings: AppleConfigurationMonitor
  /// The read replica's lag, reported, not judged: a lagging or unreachable replica delays or
  /// stops only the admin reads that go to it, never what apps and the stores need.
  let replica: ReplicaMonitor?
  /// Google Play's problems, when it is on.
  var google: GooglePlayHealth? = nil
  /// The app sign-in service's key set, when `APP_JWT_JWKS_URL` is set.
  var appJWKS: AppJWKSHealth? = nil

  package init(
    database: PostgresPool, migrator: Migrator, openAPI: [UInt8],
    appleSettings: AppleConfigurationMonitor, replica: ReplicaMonitor?,
    google: GooglePlayHealth? = nil, appJWKS: AppJWKSHealth? = nil
  ) {
    self.google = google
    self.appJWKS = appJWKS
    self.database = database
    self.migrations = MigrationFilesCache(migrator)
    self.openAPI = openAPI
    self.appleSettings = appleSettings
    self.replica = replica
  }

  package func register(_ router: inout APIRouter) {
    Self.registerLiveness(&router)
    router.add(.get, "/readyz", placement: .eventLoop) { _, context in
      // The check's own timeout cancels `SELECT 1`, but a cancel needs a server that answers:
      // against a hung one the probe would wait as long as the hang, and say nothing.
      let healthy = await BoundedWait.value(
        within: database.configuration.healthCheckTimeout + .milliseconds(500), else: false
      ) { await database.isHealthy() }
      guard healthy else {
        // A probe that left (a short timeout, a half-close) cancelled the check itself.
        if Task.isCancelled { throw HTTPError.clientClosed }
        throw HTTPError(
          503, code: "database_unavailable", detail: "the database cannot be reached",
          headers: HTTPHeaders([("Retry-After", "2")]))
      }
      let pending: [String]
      do { pending = try await migrations.pending(database) } catch {
        if HTTPError.isDeparture(error) { throw HTTPError.clientClosed }
        context.logger.error("migration check failed", ["error": .string("\(error)")])
        throw HTTPError(
          503, code: "migrations_invalid", detail: "the migrations could not be checked")
      }
      guard pending.isEmpty else {
        throw HTTPError(
          503, code: "migrations_pending",
          detail: "pending migrations: \(pending.joined(separator: ", "))")
      }
      // Still ready: a wrong Apple setting keeps receipts pending but breaks nothing else, and
      // taking the instance out of rotation would not fix it. It is said here for the operator.
      // So is a key set never fetched: every instance shares the URL and the issuer.
      var readiness = Readiness(appleSettings.current)
      if let appJWKS { readiness.add(appJWKS: await appJWKS.problems()) }
      if let google {
        readiness.add(google: await google.problems(nowMs: google.clock.milliseconds))
      }
      readiness.replica = await replica?.measure()
      return try JSONCoding.response(readiness)
    }
    router.addImmediate(.get, "/openapi.yaml") { _, _ in
      Response(
        status: 200, headers: HTTPHeaders([("Content-Type", "application/yaml")]), body: openAPI)
    }
  }

  /// `/healthz`: also on the admin listener when there is one, so each port can be probed.
  package static func registerLiveness(_ router: inout APIRouter) {
    router.addImmediate(.get, "/healthz") { _, _ in
      Response(
        status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]),
        body: Array(#"{"status":"ok"}"#.utf8))
    }
  }
}
