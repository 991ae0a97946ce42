import HTTP
import Postgres
import StorekeeperCore

/// The admin API routes the console needs beyond the listings: who the token is (so a
/// read-only token is shown no editing controls) and the overview.
package struct AdminConsoleRoutes: Sendable {
  let auth: AdminAuthenticator
  let database: PostgresPool

  package init(auth: AdminAuthenticator, database: PostgresPool) {
    self.auth = auth
    self.database = database
  }

  package func register(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/whoami") { request, context in
      let actor = try auth.authenticate(request, context)
      let scope = auth.tokens.first { $0.name == actor.name }?.scope ?? .read
      return try JSONCoding.response(["name": actor.name, "scope": scope.rawValue])
    }
    router.add(.get, "/admin/v1/overview") { request, context in
      _ = try auth.authenticate(request, context)
      var problems: [FieldError] = []
      for name in request.query.keys.sorted() where name != "days" {
        problems.append(FieldError(field: name, message: "is not a known filter"))
      }
      var days = 30
      if let text = request.query["days"] {
        if let value = Int(text), (1...Overview.maxDays).contains(value) {
          days = value
        } else {
          problems.append(
            FieldError(field: "days", message: "must be between 1 and \(Overview.maxDays)"))
        }
      }
      try PageRequest.check(problems)
      return try JSONCoding.response(try await Overview.load(days: days, database: database))
    }
  }
}
