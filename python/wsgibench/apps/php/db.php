<?php
// Seed 002's db app for the php-fpm-nginx reference: the same queries and answer as apps/db.py.
// 10 x SELECT value FROM test WHERE id >= r LIMIT 10 (r random in [1, 999990]), the sum as '%f';
// /ping answers Pong! without the database. Settings: WSGIBENCH_DB_* (php-fpm's clear_env = no).
header('Content-Type: text/plain');
function reply($body) {
    header('Content-Length: ' . strlen($body));
    echo $body;
}
if (parse_url($_SERVER['REQUEST_URI'] ?? '/', PHP_URL_PATH) === '/ping') {
    reply('Pong!');
    return;
}
function setting($name, $default) {
    $value = getenv($name);
    return ($value === false || $value === '') ? $default : $value;
}
$kind = setting('WSGIBENCH_DB_KIND', 'sqlite');
$host = setting('WSGIBENCH_DB_HOST', '127.0.0.1');
$name = setting('WSGIBENCH_DB_NAME', 'bench');
if ($kind === 'sqlite') {
    $dsn = 'sqlite:' . setting('WSGIBENCH_DB_PATH', '');
} elseif ($kind === 'postgresql') {
    $dsn = "pgsql:host=$host;port=" . setting('WSGIBENCH_DB_PORT', '5432') . ";dbname=$name";
} else {
    $dsn = "mysql:host=$host;port=" . setting('WSGIBENCH_DB_PORT', '3306') . ";dbname=$name";
}
// Persistent: each php-fpm child keeps its one connection across requests.
$db = new PDO($dsn, setting('WSGIBENCH_DB_USER', 'bench'), setting('WSGIBENCH_DB_PASSWORD', ''),
              [PDO::ATTR_PERSISTENT => true, PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
$sum = 0.0;
for ($i = 0; $i < 10; $i++) {
    $r = mt_rand(1, 999990);
    foreach ($db->query("SELECT value FROM test WHERE id >= $r LIMIT 10", PDO::FETCH_NUM) as $row) {
        $sum += (float)$row[0];
    }
}
reply(sprintf('%6f', $sum));
