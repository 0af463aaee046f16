<?php
// Seed 000's pong, for the php-fpm-nginx reference: exactly `Pong!`, text/plain.
header('Content-Type: text/plain');
header('Content-Length: 5');
echo 'Pong!';
