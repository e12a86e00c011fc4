module.exports = false;
