export { loadSettings, environmentFromNodeEnv, type ProjectSettings, type LoadSettingsOptions } from './load.js';
export { envNameOf, SETTING_FIELDS, type Settings, type SettingValues, type SettingName, type Environment, type UsernameType } from './settings.js';
