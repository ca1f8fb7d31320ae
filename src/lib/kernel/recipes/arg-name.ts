/** What an arg name is (letters, digits and `_`, not starting with a digit): the one pattern for args, placeholders and `with:`. */
export const ARG_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
