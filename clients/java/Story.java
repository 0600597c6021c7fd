// A partner's first calls to Kobo in Java, over the client openapi-generator 7.26.0 generates from
// spec/openapi.yaml with `-g java --library native --additional-properties openApiNullable=false`
// (why those two, in docs/partners.md, "Java"): the JDK's own HTTP client, Jackson for JSON.
//
// Steps, every answer asserted: a recorded page with values of open enums this spec does not know
// (clients/recorded/), which must parse, the unknown values kept as strings and the known ones
// still recognised; an integration token (generate_token); the business's transactions
// (fetch_transactions_api); a current account opened with an Idempotency-Key and retried with it
// (one account, `Idempotent-Replayed: true`); an error answer typed (`41`). It reads where the
// demo is from the environment, as the other stories do: KOBO_BASE_URL, KOBO_CLIENT_ID,
// KOBO_CLIENT_SECRET, KOBO_MAIN_ACCOUNT. `.ci/clients` compiles it with the generated client
// (plain javac) and runs it against a fresh `kobo demo`.
//
// The open enums are read through `text` and `known` below, which take the field as an Object:
// since API 2.5.0 the spec gives them as a plain string (a `String` here), and the same story
// still compiles against a client of the `anyOf` wrapper of 2.4.0 (`OpenTransactionStatus`, whose
// `getActualInstance()` is the enum or a String).

import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import org.openapitools.client.ApiClient;
import org.openapitools.client.ApiException;
import org.openapitools.client.ApiResponse;
import org.openapitools.client.api.AccountsApi;
import org.openapitools.client.api.SessionApi;
import org.openapitools.client.api.TransactionsApi;
import org.openapitools.client.model.AbstractOpenApiSchema;
import org.openapitools.client.model.AccountType;
import org.openapitools.client.model.Channel;
import org.openapitools.client.model.CreateAccountApiResponse;
import org.openapitools.client.model.CreateAccountRequest;
import org.openapitools.client.model.ErrorEnvelope;
import org.openapitools.client.model.FetchTransactionsApiRequest;
import org.openapitools.client.model.FetchTransactionsApiResponse;
import org.openapitools.client.model.GenerateTokenRequest;
import org.openapitools.client.model.GenerateTokenResponse;
import org.openapitools.client.model.IntegrationTransaction;
import org.openapitools.client.model.IntegrationTransactionFilters;
import org.openapitools.client.model.ResponseCode;
import org.openapitools.client.model.SuccessCode;
import org.openapitools.client.model.TokenType;
import org.openapitools.client.model.TransactionCategory;
import org.openapitools.client.model.TransactionStatus;

public final class Story {
  private static final class Failure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Failure(String message) {
      super(message);
    }
  }

  private static void check(boolean condition, String format, Object... args) {
    if (!condition) {
      throw new Failure(String.format(format, args));
    }
  }

  /** An open enum's value as the wire has it, known or not. */
  static String text(Object open) {
    if (open instanceof AbstractOpenApiSchema wrapper) {
      return text(wrapper.getActualInstance());
    }
    // A generated enum's toString() is its value; a String is itself.
    return open == null ? null : open.toString();
  }

  /** The known value an open enum carries, or empty for a value added after this spec. */
  static <E> Optional<E> known(Function<String, E> fromValue, Object open) {
    try {
      return Optional.of(fromValue.apply(text(open)));
    } catch (IllegalArgumentException unknown) {
      return Optional.empty();
    }
  }

  private final String baseUrl = System.getenv("KOBO_BASE_URL");
  private final String clientId = System.getenv("KOBO_CLIENT_ID");
  private final String clientSecret = System.getenv("KOBO_CLIENT_SECRET");
  private final String mainAccount = System.getenv("KOBO_MAIN_ACCOUNT");
  private final ObjectMapper json = ApiClient.createDefaultObjectMapper();
  private ApiClient integration;

  /** A client of the demo; with a token, it sends it on every call. */
  private ApiClient client(String token) {
    ApiClient client = new ApiClient();
    client.updateBaseUri(baseUrl);
    if (token != null) {
      // The native library has no auth settings: the header goes on every request.
      client.setRequestInterceptor((HttpRequest.Builder request) ->
          request.header("Authorization", "Bearer " + token));
    }
    return client;
  }

  // A later minor release may add a value to an open enum (x-extensible-enum). A recorded page
  // with `status: "on_hold"` and `channel: "rtgs"` parses, the unknown values kept as strings and
  // the known one (`transaction_category` `collection`) still recognised. No call.
  void keepUnknownValues() throws Exception {
    String recorded = Files.readString(Path.of("../recorded/fetch_transactions_api-unknown-values.json"));
    FetchTransactionsApiResponse page = json.readValue(recorded, FetchTransactionsApiResponse.class);
    check(page.getData().size() == 1, "the recorded page has %d transactions", page.getData().size());
    IntegrationTransaction transaction = page.getData().get(0);
    Object status = transaction.getStatus();
    Object channel = transaction.getChannel();
    Object category = transaction.getTransactionCategory();
    check("on_hold".equals(text(status)), "status %s", text(status));
    check(known(TransactionStatus::fromValue, status).isEmpty(), "on_hold is not a TransactionStatus this spec knows");
    check("rtgs".equals(text(channel)), "channel %s", text(channel));
    check(known(Channel::fromValue, channel).isEmpty(), "rtgs is not a Channel this spec knows");
    check(known(TransactionCategory::fromValue, category).equals(Optional.of(TransactionCategory.TRANSACTION_CATEGORY_COLLECTION)),
        "transaction_category %s", text(category));
    // As the spec says of a status: an unknown one is treated as pending, so it is not final.
    boolean isFinal = known(TransactionStatus::fromValue, status)
        .map(s -> s == TransactionStatus.TRANSACTION_STATUS_SUCCESS || s == TransactionStatus.TRANSACTION_STATUS_FAILED)
        .orElse(false);
    check(!isFinal, "an unknown status is not final");
    // And it goes back out as it came.
    String again = json.writeValueAsString(transaction);
    check(again.contains("\"status\":\"on_hold\"") && again.contains("\"channel\":\"rtgs\""), "written back as %s", again);
  }

  void takeIntegrationToken() throws Exception {
    GenerateTokenResponse grant = new SessionApi(client(null))
        .generateToken(new GenerateTokenRequest().clientId(clientId).clientSecret(clientSecret));
    check(grant.getData().getTokenType() == TokenType.TOKEN_TYPE_BEARER, "token_type %s", grant.getData().getTokenType());
    check(grant.getData().getExpiresIn() > 0, "expires_in %d", grant.getData().getExpiresIn());
    integration = client(grant.getData().getAccessToken());
  }

  // The demo's seeded history of the main account: every status is one this spec knows.
  void listTransactions() throws Exception {
    FetchTransactionsApiResponse page = new TransactionsApi(integration).fetchTransactionsApi(
        new FetchTransactionsApiRequest().limit(100).filters(new IntegrationTransactionFilters().accountNumber(mainAccount)));
    check(page.getResponseCode() == SuccessCode.SUCCESS, "response_code %s", page.getResponseCode());
    check(!page.getData().isEmpty(), "fetch_transactions_api: the demo's main account %s has no transaction", mainAccount);
    for (IntegrationTransaction transaction : page.getData()) {
      check(known(TransactionStatus::fromValue, transaction.getStatus()).isPresent(), "status %s", text(transaction.getStatus()));
      check(known(TransactionCategory::fromValue, transaction.getTransactionCategory()).isPresent(),
          "transaction_category %s", text(transaction.getTransactionCategory()));
      check(transaction.getAmount().matches("[0-9]+\\.[0-9]{2}"), "amount %s", transaction.getAmount());
    }
  }

  // Idempotency-Key: the generated signature is createAccountApi(body, idempotencyKey), since
  // the key is optional here (docs/partners.md, "Idempotency-Key in generated signatures").
  void openAnAccountTwice() throws Exception {
    AccountsApi accounts = new AccountsApi(integration);
    CreateAccountRequest body = new CreateAccountRequest().accountName("Adaeze Foods Ltd - Java");
    String idempotencyKey = UUID.randomUUID().toString();
    CreateAccountApiResponse first = accounts.createAccountApi(body, idempotencyKey);
    check(first.getData().getAccountType() == AccountType.ACCOUNT_TYPE_CURRENT, "create_account_api: %s", first.getData().getAccountType());
    check("0.000000000".equals(first.getData().getBalance()), "create_account_api: balance %s", first.getData().getBalance());
    ApiResponse<CreateAccountApiResponse> again = accounts.createAccountApiWithHttpInfo(body, idempotencyKey);
    check(again.getData().getData().getAccountNumber().equals(first.getData().getAccountNumber()), "the retry opened another account");
    List<String> replayed = again.getHeaders().getOrDefault("idempotent-replayed", List.of());
    check(replayed.equals(List.of("true")), "Idempotent-Replayed %s", replayed);
  }

  // An error answer is raised as ApiException; its body is the ErrorEnvelope.
  void refuseABadToken() throws Exception {
    try {
      new TransactionsApi(client("not-a-token")).fetchTransactionsApi(new FetchTransactionsApiRequest());
      check(false, "fetch_transactions_api with a bad token succeeded");
    } catch (ApiException refused) {
      ErrorEnvelope envelope = json.readValue(refused.getResponseBody(), ErrorEnvelope.class);
      check(refused.getCode() == 401, "HTTP %d", refused.getCode());
      check(envelope.getResponseCode() == ResponseCode.UNAUTHENTICATED && !envelope.getStatus(), "envelope %s", envelope);
    }
  }

  private interface Step {
    void run() throws Exception;
  }

  public static void main(String[] args) {
    List<String> missing = new ArrayList<>();
    for (String name : List.of("KOBO_BASE_URL", "KOBO_CLIENT_ID", "KOBO_CLIENT_SECRET", "KOBO_MAIN_ACCOUNT")) {
      if (System.getenv(name) == null || System.getenv(name).isEmpty()) {
        missing.add(name);
      }
    }
    if (!missing.isEmpty()) {
      System.err.println("java story: set " + String.join(", ", missing) + " (see docs/partners.md, Clients in other languages)");
      System.exit(2);
    }
    Story story = new Story();
    List<Object[]> steps = List.of(
        new Object[] {"a recorded page with values of open enums this spec does not know", (Step) story::keepUnknownValues},
        new Object[] {"take an integration token", (Step) story::takeIntegrationToken},
        new Object[] {"list the main account's transactions", (Step) story::listTransactions},
        new Object[] {"open a current account, retry with the same Idempotency-Key", (Step) story::openAnAccountTwice},
        new Object[] {"an error answer typed (41)", (Step) story::refuseABadToken});
    int passed = 0;
    for (Object[] step : steps) {
      long started = System.nanoTime();
      try {
        ((Step) step[1]).run();
      } catch (Exception failed) {
        System.out.printf("  FAIL %s: %s%n", step[0], failed);
        System.out.printf("java: %d passed, 1 failed%n", passed);
        System.exit(1);
      }
      passed++;
      System.out.printf("  ok   %s (%d ms)%n", step[0], (System.nanoTime() - started) / 1_000_000);
    }
    System.out.printf("java: %d passed, 0 failed%n", passed);
  }
}
