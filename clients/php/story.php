<?php
// A partner's first calls to Kobo in PHP, over the client openapi-generator 7.26.0 generates from
// spec/openapi.yaml with its defaults (`generate -g php`, no flags): Guzzle 7 for HTTP, PHP 8.1 or
// newer with curl, json and mbstring.
//
// Steps, every answer asserted: a recorded page with values of open enums this spec does not know
// (clients/recorded/); an integration token (generate_token); the business's transactions
// (fetch_transactions_api); a current account opened with an Idempotency-Key, passed by name, and
// retried with it (one account, `Idempotent-Replayed: true`); an error answer typed (`41`). It
// reads where the demo is from the environment, as the other stories do: KOBO_BASE_URL,
// KOBO_CLIENT_ID, KOBO_CLIENT_SECRET, KOBO_MAIN_ACCOUNT. `.ci/clients` runs it against a fresh
// `kobo demo`, with Debian's Guzzle (php-guzzlehttp-guzzle) or a Composer autoloader
// (KOBO_PHP_AUTOLOAD, the path of vendor/autoload.php).
//
// Open enums: since API 2.5.0 the spec gives each as `Open<Name>`, a plain string (its
// `x-known-values` names the enum of the values known today), so the generated models read
// `status`, `channel`, ... as the string on the wire, known or not, and the story compares it with
// the enum class's constants. (Before, `Open<Name>` was an `anyOf` of the enum and a string, which
// these models read as an empty object, every value lost: issue 57.)

declare(strict_types=1);

use OpenAPI\Client\Api\AccountsApi;
use OpenAPI\Client\Api\SessionApi;
use OpenAPI\Client\Api\TransactionsApi;
use OpenAPI\Client\ApiException;
use OpenAPI\Client\Configuration;
use OpenAPI\Client\Model\AccountType;
use OpenAPI\Client\Model\Channel;
use OpenAPI\Client\Model\CreateAccountRequest;
use OpenAPI\Client\Model\ErrorEnvelope;
use OpenAPI\Client\Model\FetchTransactionsApiRequest;
use OpenAPI\Client\Model\FetchTransactionsApiResponse;
use OpenAPI\Client\Model\GenerateTokenRequest;
use OpenAPI\Client\Model\IntegrationTransactionFilters;
use OpenAPI\Client\Model\ResponseCode;
use OpenAPI\Client\Model\SuccessCode;
use OpenAPI\Client\Model\TokenType;
use OpenAPI\Client\Model\TransactionCategory;
use OpenAPI\Client\Model\TransactionStatus;
use OpenAPI\Client\ObjectSerializer;

require getenv('KOBO_PHP_AUTOLOAD') ?: '/usr/share/php/GuzzleHttp/autoload.php';
// The generated client, PSR-4 (what its composer.json declares): OpenAPI\Client\ -> lib/.
spl_autoload_register(function (string $class): void {
    $prefix = 'OpenAPI\\Client\\';
    if (strncmp($class, $prefix, strlen($prefix)) === 0) {
        $file = __DIR__ . '/generated/kobo/lib/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});

final class Failure extends Exception
{
}

function check(bool $condition, string $format, mixed ...$args): void
{
    if (!$condition) {
        throw new Failure(vsprintf($format, array_map(fn ($arg) => is_scalar($arg) || $arg === null ? var_export($arg, true) : json_encode($arg), $args)));
    }
}

/** An open enum's value as the wire had it (a string), or null where it is not one. */
function text(mixed $open): ?string
{
    return is_string($open) ? $open : null;
}

/** Whether the value is one of `$enum`'s values (a generated enum class: its constants). */
function known(string $enum, mixed $open): bool
{
    return is_string($open) && in_array($open, $enum::getAllowableEnumValues(), true);
}

final class Story
{
    private string $baseUrl;
    private Configuration $integration;

    public function __construct(private array $settings)
    {
        $this->baseUrl = $settings['KOBO_BASE_URL'];
    }

    private function configuration(?string $token): Configuration
    {
        $configuration = (new Configuration())->setHost($this->baseUrl);
        return $token === null ? $configuration : $configuration->setAccessToken($token);
    }

    // A later minor release may add a value to an open enum (x-extensible-enum): a recorded page
    // with `status: "on_hold"` and `channel: "rtgs"`. No call.
    public function keepUnknownValues(): void
    {
        $recorded = json_decode(file_get_contents(__DIR__ . '/../recorded/fetch_transactions_api-unknown-values.json'));
        $page = ObjectSerializer::deserialize($recorded, FetchTransactionsApiResponse::class, []);
        check(count($page->getData()) === 1, 'the recorded page has %s transactions', count($page->getData()));
        $transaction = $page->getData()[0];
        $status = $transaction->getStatus();
        $channel = $transaction->getChannel();
        $category = $transaction->getTransactionCategory();
        check(text($status) === 'on_hold', 'status %s', $status);
        check(!known(TransactionStatus::class, $status), 'on_hold is not a TransactionStatus this spec knows');
        check(text($channel) === 'rtgs', 'channel %s', $channel);
        check(!known(Channel::class, $channel), 'rtgs is not a Channel this spec knows');
        check($category === TransactionCategory::TRANSACTION_CATEGORY_COLLECTION, 'transaction_category %s', $category);
        // As the spec says of a status: an unknown one is treated as pending, so it is not final.
        check(!in_array($status, [TransactionStatus::TRANSACTION_STATUS_SUCCESS, TransactionStatus::TRANSACTION_STATUS_FAILED], true), 'an unknown status is not final');
        $again = json_encode(ObjectSerializer::sanitizeForSerialization($transaction));
        check(str_contains($again, '"status":"on_hold"') && str_contains($again, '"channel":"rtgs"'), 'written back as %s', $again);
    }

    public function takeIntegrationToken(): void
    {
        $grant = (new SessionApi(null, $this->configuration(null)))->generateToken(new GenerateTokenRequest([
            'client_id' => $this->settings['KOBO_CLIENT_ID'],
            'client_secret' => $this->settings['KOBO_CLIENT_SECRET'],
        ]));
        check($grant->getData()->getTokenType() === TokenType::TOKEN_TYPE_BEARER, 'token_type %s', $grant->getData()->getTokenType());
        check($grant->getData()->getExpiresIn() > 0, 'expires_in %s', $grant->getData()->getExpiresIn());
        $this->integration = $this->configuration($grant->getData()->getAccessToken());
    }

    // The demo's seeded history of the main account: every status is one this spec knows.
    public function listTransactions(): void
    {
        $api = new TransactionsApi(null, $this->integration);
        $body = new FetchTransactionsApiRequest([
            'limit' => 100,
            'filters' => new IntegrationTransactionFilters(['account_number' => $this->settings['KOBO_MAIN_ACCOUNT']]),
        ]);
        $page = $api->fetchTransactionsApi($body);
        check($page->getResponseCode() === SuccessCode::SUCCESS, 'response_code %s', $page->getResponseCode());
        check(count($page->getData()) > 0, 'fetch_transactions_api: the main account has no transaction');
        $statuses = [];
        foreach ($page->getData() as $transaction) {
            check(preg_match('/^[0-9]+\.[0-9]{2}$/', $transaction->getAmount()) === 1, 'amount %s', $transaction->getAmount());
            $statuses[] = [$transaction->getStatus(), $transaction->getTransactionCategory()];
        }
        foreach ($statuses as [$status, $category]) {
            check(known(TransactionStatus::class, $status), 'status %s', $status);
            check(known(TransactionCategory::class, $category), 'transaction_category %s', $category);
        }
    }

    // Idempotency-Key passed by name (PHP 8 named arguments): right wherever the generated
    // signature puts it.
    public function openAnAccountTwice(): void
    {
        $accounts = new AccountsApi(null, $this->integration);
        $body = new CreateAccountRequest(['account_name' => 'Adaeze Foods Ltd - PHP']);
        $key = bin2hex(random_bytes(16));
        $first = $accounts->createAccountApi(create_account_request: $body, idempotency_key: $key);
        check($first->getData()->getAccountType() === AccountType::ACCOUNT_TYPE_CURRENT, 'create_account_api: %s', $first->getData()->getAccountType());
        check($first->getData()->getBalance() === '0.000000000', 'create_account_api: balance %s', $first->getData()->getBalance());
        [$again, $status, $headers] = $accounts->createAccountApiWithHttpInfo(create_account_request: $body, idempotency_key: $key);
        check($again->getData()->getAccountNumber() === $first->getData()->getAccountNumber(), 'the retry opened another account');
        $replayed = array_change_key_case($headers)['idempotent-replayed'] ?? [];
        check($status === 200 && $replayed === ['true'], 'HTTP %s, Idempotent-Replayed %s', $status, $replayed);
    }

    // An error answer is raised as ApiException; its response object is the ErrorEnvelope.
    public function refuseABadToken(): void
    {
        try {
            (new TransactionsApi(null, $this->configuration('not-a-token')))->fetchTransactionsApi(new FetchTransactionsApiRequest());
            check(false, 'fetch_transactions_api with a bad token succeeded');
        } catch (ApiException $refused) {
            $envelope = $refused->getResponseObject();
            check($refused->getCode() === 401, 'HTTP %s', $refused->getCode());
            check($envelope instanceof ErrorEnvelope, 'the error is not an ErrorEnvelope: %s', $refused->getResponseBody());
            check($envelope->getResponseCode() === ResponseCode::UNAUTHENTICATED && $envelope->getStatus() === false, 'envelope %s', (string) $envelope);
        }
    }
}

$settings = [];
$missing = [];
foreach (['KOBO_BASE_URL', 'KOBO_CLIENT_ID', 'KOBO_CLIENT_SECRET', 'KOBO_MAIN_ACCOUNT'] as $name) {
    $settings[$name] = (string) getenv($name);
    if ($settings[$name] === '') {
        $missing[] = $name;
    }
}
if ($missing !== []) {
    fwrite(STDERR, 'php story: set ' . implode(', ', $missing) . " (see docs/partners.md, Clients in other languages)\n");
    exit(2);
}
$story = new Story($settings);
$steps = [
    'a recorded page with values of open enums this spec does not know' => $story->keepUnknownValues(...),
    'take an integration token' => $story->takeIntegrationToken(...),
    "list the main account's transactions" => $story->listTransactions(...),
    'open a current account, retry with the same Idempotency-Key (by name)' => $story->openAnAccountTwice(...),
    'an error answer typed (41)' => $story->refuseABadToken(...),
];
$passed = 0;
foreach ($steps as $name => $step) {
    $started = hrtime(true);
    try {
        $step();
    } catch (Throwable $failed) {
        printf("  FAIL %s: %s: %s\n", $name, get_class($failed), $failed->getMessage());
        printf("php: %d passed, 1 failed\n", $passed);
        exit(1);
    }
    $passed++;
    printf("  ok   %s (%d ms)\n", $name, (hrtime(true) - $started) / 1_000_000);
}
printf("php: %d passed, 0 failed\n", $passed);
