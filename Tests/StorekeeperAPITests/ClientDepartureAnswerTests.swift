import HTTP
import Postgres
import StorekeeperTestSupport
import Synchronization
import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

/// Audit http, finding 1: a client that leaves cancels its request's task, which cancels the
/// statement it is in (57014). That was logged as a database error and answered 500, counted
/// among the server's failures, for every mobile client that timed out.
@Suite(.database) struct ClientDepartureAnswerTests {
  @Test func aStatementCancelledBecauseItsClientLeftIsTheClientsDoingNotAFailure() async throws {
    try await DomainHarness.with { h in
      let started = Mutex(false)
      var router = APIRouter(logger: DomainHarness.logger)
      router.add(.get, "/slow") { _, _ in
        started.withLock { $0 = true }
        try await h.database.execute("SELECT pg_sleep(30)")
        return Response.text("slept")
      }
      let routes = router.router
      let request = Task { await routes.handle(Request(method: .get, target: "/slow")) }
      for _ in 0..<3000 where !started.withLock({ $0 }) {
        try await Task.sleep(for: .milliseconds(10))
      }
      try await Task.sleep(for: .milliseconds(200))  // into the statement
      request.cancel()
      let answer = await request.value
      #expect(answer.status == 499)
      #expect(String(decoding: answer.body, as: UTF8.self).contains("client_closed_request"))
    }
  }

  @Test func aStatementThatFailsWhileItsClientIsThereIsStillAFailure() async throws {
    try await DomainHarness.with { h in
      var router = APIRouter(logger: DomainHarness.logger)
      router.add(.get, "/cancelled") { _, _ in
        // The server's own cancel (a statement timeout, an operator's pg_cancel_backend).
        try await h.database.withTransaction { tx in
          try await tx.execute("SET LOCAL statement_timeout = 1")
          try await tx.execute("SELECT pg_sleep(1)")
        }
        return Response.text("slept")
      }
      let answer = await router.router.handle(Request(method: .get, target: "/cancelled"))
      #expect(answer.status == 500)
    }
  }
}
